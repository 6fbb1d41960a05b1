import { totalTokens, type Usage } from '../agent/state.js';
import type { Plan } from '../plan/types.js';
import type { BudgetReason, ClassifiedAs } from '../events/reasons.js';

/**
 * The slug's stop-loss: spent tokens (input + output + cache read + cache creation) and
 * cost against `[budget]`. Undefined = within budget. Reaching the limit counts as spent:
 * a run may not start another attempt with nothing left.
 */
export function budgetExceeded(
  budget: Plan['budget'],
  spent: { usage: Usage; costUsd: number },
): ({ detail: string } & ClassifiedAs<BudgetReason>) | undefined {
  const tokens = totalTokens(spent.usage);
  if (budget.maxTokens !== undefined && tokens >= budget.maxTokens) {
    return { class: 'budget', reason: 'max_tokens', detail: `${tokens} tokens spent, budget.max_tokens = ${budget.maxTokens}` };
  }
  if (budget.maxCostUsd !== undefined && spent.costUsd >= budget.maxCostUsd) {
    return {
      class: 'budget',
      reason: 'max_cost_usd',
      detail: `$${spent.costUsd.toFixed(4)} spent, budget.max_cost_usd = ${budget.maxCostUsd}`,
    };
  }
  return undefined;
}
