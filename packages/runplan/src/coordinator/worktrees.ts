import { existsSync } from 'node:fs';
import { git } from '../host/git.js';
import type { RunParts } from './parts.js';

// Once a task is checkpointed its earlier attempts' worktrees go (`git worktree remove`,
// then prune); their evidence stays in the state dir, their attempt dirs until `retain`.
export async function removeEarlierTrees(parts: RunParts, taskId: string): Promise<void> {
  const { ctx, ledger } = parts;
  const trees = ledger.trees.get(taskId);
  ledger.trees.delete(taskId);
  if (trees === undefined || trees.length === 0) return;
  const removed: string[] = [];
  await ctx.worktrees.exclusive(async () => {
    for (const { worktree } of trees) {
      if (!existsSync(worktree) && !parts.registeredTrees.has(worktree)) continue;
      await git(ctx.repo, ['worktree', 'remove', '--force', '--end-of-options', worktree]);
      removed.push(worktree);
    }
    if (removed.length > 0) await git(ctx.repo, ['worktree', 'prune']);
  });
  if (removed.length > 0) await ctx.emit('worktrees-removed', { taskId, worktrees: removed });
}
