import { addUsage, ZERO_USAGE, type UsageTotals } from '../events/types.js';
import type { Plan } from '../plan/types.js';
import { budgetExceeded } from '../repair/index.js';
import type { PriorRun } from './inspect.js';
import type { Refusal } from './refusal.js';

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

// Whether the slug-wide budget is spent (repair.ts decides; this only words it).
export function spentBudget(plan: Plan, usage: UsageTotals, costUsd: number): string | undefined {
  return budgetExceeded(plan.budget, { usage, costUsd })?.detail;
}

// Spend is the slug's: a new run or a continuation (`what`) refuses while `carried` has spent the budget.
export function budgetSpentRefusal(plan: Plan, carried: SlugSpend, what: string): Refusal | undefined {
  const spent = spentBudget(plan, carried.usage, carried.costUsd);
  if (spent === undefined) return undefined;
  return {
    reason: 'budget_spent',
    message: `slug ${plan.slug} has spent its budget across its runs (${spent}; --fresh and new runs count too); ${what} would spend more`,
    hint: `raise [budget] in ${plan.file}, or runplan run ${plan.file} --reset-budget (journaled) to start its spend over`,
  };
}
