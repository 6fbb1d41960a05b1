// Token usage and cost: what an agent reported, summed the one way everything sums it.

/** Token usage as the agent reported it (zeros for formats that report nothing). */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

export const ZERO_USAGE: UsageTotals = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };

// A cost as shown in receipts and status: whole micro-dollars (0.1709, not the float sum
// 0.17089999999999997). Sums are kept exact-as-floats and rounded only here, so many small
// costs never round away and budgets see what was spent.
export function shownCost(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

// Adds two usage totals field by field.
export function addUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
  };
}

// Every kind of token added up, as budgets count them.
export function totalTokensOf(u: UsageTotals): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;
}
