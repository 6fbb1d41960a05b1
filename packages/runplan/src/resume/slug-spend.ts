import { addUsage, ZERO_USAGE, type UsageTotals } from '../events/types.js';
import type { PriorRun } from './inspect.js';

/**
 * The only records a RunView's spend comes from (`started` with what it carried and
 * `budgetReset`, `usage`, `costUsd`: see RunView.spend's callers): slugSpend of views folded
 * from these alone is that of the whole journals, so `status` parses no other record of the
 * slug's older runs.
 */
export const SPEND_RECORDS: ReadonlySet<string> = new Set(['run-started', 'usage', 'command-settled']);

/** What the slug's agents spent, across --fresh, continuations and new runs. */
export interface SlugSpend {
  usage: UsageTotals;
  costUsd: number;
}

// A run's own spend: its totals less what its run-started carried in from earlier runs.
function ownSpend(run: Pick<PriorRun, 'journal'>): SlugSpend {
  const started = run.journal.started;
  const carried = { ...ZERO_USAGE, ...(started?.usageCarried ?? {}) };
  const u = run.journal.usage;
  return {
    usage: {
      inputTokens: u.inputTokens - carried.inputTokens,
      outputTokens: u.outputTokens - carried.outputTokens,
      cacheReadTokens: u.cacheReadTokens - carried.cacheReadTokens,
      cacheCreationTokens: u.cacheCreationTokens - carried.cacheCreationTokens,
    },
    costUsd: run.journal.costUsd - (started?.costCarried ?? 0),
  };
}

// The slug's spend: every run's own spend (in start order) since the last run an operator
// started with --reset-budget (journaled as run-started `budgetReset`).
export function slugSpend(prior: readonly Pick<PriorRun, 'journal'>[]): SlugSpend {
  let total: SlugSpend = { usage: ZERO_USAGE, costUsd: 0 };
  for (const run of prior) {
    if (run.journal.started === undefined) continue;
    const own = ownSpend(run);
    const base = run.journal.started.budgetReset === true ? { usage: ZERO_USAGE, costUsd: 0 } : total;
    total = { usage: addUsage(base.usage, own.usage), costUsd: base.costUsd + own.costUsd };
  }
  return total;
}

// The last running total of each agent thread (codex) across the slug's runs, in start order.
export function slugThreadTotals(prior: readonly PriorRun[]): Map<string, UsageTotals> {
  const totals = new Map<string, UsageTotals>();
  for (const run of prior) for (const [id, total] of run.journal.threadTotals) totals.set(id, total);
  return totals;
}
