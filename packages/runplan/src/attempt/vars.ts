import { totalTokens } from '../agent/state.js';
import type { Plan, TaskSpec } from '../plan/types.js';
import type { UsageTotals } from '../events/types.js';
import type { RunContext } from '../coordinator/context.js';
import { compactUtc } from '../host/state.js';

// The variables of the `workdir` tier for one attempt (nothing that names the directory itself).
export function workdirVars(
  ctx: Pick<RunContext, 'plan' | 'runId' | 'startedAt'>,
  task: Pick<TaskSpec, 'id'>,
  attempt: number,
): Record<string, string | number> {
  const started = compactUtc(ctx.startedAt);
  return {
    'harness.name': ctx.plan.slug,
    'plan.slug': ctx.plan.slug,
    'run.id': ctx.runId,
    'task.id': task.id,
    'run.attempt': attempt,
    'run.date': `${started.slice(0, 4)}-${started.slice(4, 6)}-${started.slice(6, 8)}`,
    'run.time': started.slice(9, 15),
    'run.started_at': started,
  };
}

// {{budget.remaining_usd}} (dollars, two decimals, rounded down) and {{budget.remaining_tokens}}:
// what is left of each [budget] limit the plan sets, given the slug's spend so far; never negative.
export function budgetVars(budget: Plan['budget'], spent: { usage: UsageTotals; costUsd: number }): Record<string, string | number> {
  const vars: Record<string, string | number> = {};
  if (budget.maxCostUsd !== undefined) {
    // Cents first, rounded to a micro-cent, so 0.3 - 0.1 is 20 cents, not 19.999….
    const cents = Math.floor(Number(((budget.maxCostUsd - spent.costUsd) * 100).toFixed(6)));
    vars['budget.remaining_usd'] = (Math.max(0, cents) / 100).toFixed(2);
  }
  if (budget.maxTokens !== undefined) vars['budget.remaining_tokens'] = Math.max(0, budget.maxTokens - totalTokens(spent.usage));
  return vars;
}
