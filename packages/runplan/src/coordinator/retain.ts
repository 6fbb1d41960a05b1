import { prune, render } from '@runplan/workdir';
import { workdirVars } from '../attempt/vars.js';
import { git } from '../host/git.js';
import type { RunParts } from './parts.js';

// `retain = N`: prunes finished attempt dirs beyond the newest N through workdir's safe
// pruning (marked, template-shaped, never in flight), then forgets their git worktrees.
export async function retain(parts: RunParts, taskId: string, attempt: number, inFlightTasks: string[]): Promise<void> {
  const { ctx, ledger } = parts;
  if (ctx.plan.retain === undefined) return;
  const vars = workdirVars(ctx, { id: taskId }, attempt);
  const inFlight: string[] = [];
  for (const id of inFlightTasks) {
    const dir = render(ctx.workdirTemplate, workdirVars(ctx, { id }, ledger.attempts.get(id) ?? 1), 'workdir');
    if (dir.ok) inFlight.push(dir.value);
  }
  const pruned = await prune(ctx.workdirTemplate, vars, { retain: ctx.plan.retain, inFlight });
  if (pruned.ok) await ctx.worktrees.exclusive(() => git(ctx.repo, ['worktree', 'prune']));
}
