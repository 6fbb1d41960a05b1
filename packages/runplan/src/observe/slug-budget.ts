import { readFile } from 'node:fs/promises';
import { isPlainObject } from '@runplan/common';
import { shownCost, totalTokensOf, type UsageTotals } from '../events/types.js';
import type { RunView } from '../events/view.js';
import { headerStartOrder, runPaths, type RunStart, type SlugPaths } from '../host/state.js';
import { readRun } from '../resume/inspect.js';
import { SPEND_RECORDS, slugSpend } from '../resume/slug-spend.js';

/**
 * What `status` shows of the slug's budget: the slug's spend across all its runs (--fresh,
 * continuations and new runs count; --reset-budget starts it over), which is what a run
 * and its budget check see, against the `[budget]` of the newest run's plan copy.
 */
export interface SlugBudget {
  usage: UsageTotals;
  /** Every kind of token added up, as the budget counts them. */
  tokens: number;
  costUsd: number;
  /** The newest started run's `[budget]` (null: no cap of that kind). */
  maxTokens: number | null;
  maxCostUsd: number | null;
}

// The slug's spend and budget, read-only: `older` are the views spendReads folded of every
// run but the newest (in start order), `newest` the newest's whole view; the newest started
// run's plan copy gives the budget.
export async function slugBudget(older: readonly RunView[], newest: RunView): Promise<SlugBudget> {
  const views = [...older, newest];
  const spend = slugSpend(views.map((journal) => ({ journal })));
  const u = spend.usage;
  const started = views.findLast((v) => v.started !== undefined)?.started;
  const budget = await planCopyBudget(typeof started?.planCopy === 'string' ? started.planCopy : undefined);
  return {
    usage: u,
    tokens: totalTokensOf(u),
    costUsd: shownCost(spend.costUsd),
    ...budget,
  };
}

/** How many journals spendReads reads at a time: the reads overlap, the parsing stays small. */
const READ_AHEAD = 8;

/** One run's journal as spendReads folds it: where the run stands in the slug's history, and its spend. */
export interface SpendRead {
  start: RunStart;
  /** Only the header and the spend records folded (SPEND_RECORDS); every line checked. */
  view: RunView;
}

// Every run's journal read once, READ_AHEAD at a time, only its header and spend records
// parsed: the start order comes from the header (as listRuns reads it), so the slug's runs
// are ordered without a pass over the headers first. In the order of `runIds`.
export async function spendReads(slug: SlugPaths, runIds: readonly string[]): Promise<SpendRead[]> {
  const reads: SpendRead[] = new Array(runIds.length);
  let next = 0;
  const reader = async (): Promise<void> => {
    for (let i = next++; i < runIds.length; i = next++) {
      const runId = runIds[i]!;
      const read = await readRun(runPaths(slug, runId).journal, { only: SPEND_RECORDS });
      const header = read.scan?.header;
      reads[i] = {
        start: { runId, startOrder: headerStartOrder(header), createdAt: header !== undefined ? (read.view.createdAt ?? null) : null },
        view: read.view,
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_AHEAD, runIds.length) }, reader));
  return reads;
}

// The `budget` of a masked plan copy (planCopy: `{maxTokens, maxCostUsd}`); nulls when it cannot be read.
async function planCopyBudget(path: string | undefined): Promise<Pick<SlugBudget, 'maxTokens' | 'maxCostUsd'>> {
  const out: Pick<SlugBudget, 'maxTokens' | 'maxCostUsd'> = { maxTokens: null, maxCostUsd: null };
  if (path === undefined) return out;
  try {
    const raw = JSON.parse(await readFile(path, 'utf8')) as unknown;
    const budget = isPlainObject(raw) && isPlainObject(raw.budget) ? raw.budget : {};
    if (typeof budget.maxTokens === 'number') out.maxTokens = budget.maxTokens;
    if (typeof budget.maxCostUsd === 'number') out.maxCostUsd = budget.maxCostUsd;
  } catch {
    // A missing or unreadable plan copy: the spend is shown without a budget.
  }
  return out;
}

// The BUDGET cell: `4000/1500 tok` and `$0.12/$1.00` against the caps there are; spend alone without any.
export function budgetCell(b: SlugBudget): string {
  const tokens = b.maxTokens !== null ? `${b.tokens}/${b.maxTokens} tok` : undefined;
  const cost = b.maxCostUsd !== null ? `${dollars(b.costUsd)}/${dollars(b.maxCostUsd)}` : undefined;
  const cells = [tokens, cost].filter((c) => c !== undefined);
  return cells.length > 0 ? cells.join(' ') : '-';
}

// Dollars to the cent, or to as many places (up to 4) as the amount needs: a cap of 0.025 is
// `$0.025`, never `$0.03` (nor is a spend of 0.0049 `$0.00`); float noise (0.1 + 0.2) is no place.
function dollars(usd: number): string {
  for (const places of [2, 3]) {
    const text = usd.toFixed(places);
    if (Math.abs(Number(text) - usd) < 1e-9) return `$${text}`;
  }
  return `$${usd.toFixed(4)}`;
}
