import type { TaskSpec } from '../plan/types.js';
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
