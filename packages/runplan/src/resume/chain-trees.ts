import type { PriorRun } from './inspect.js';
import type { RecoveredRun } from './recover.js';

// The worktrees of a run's failed, interrupted and crashed attempts, and those of every run
// it continues, oldest first: a continuation carries them in memory only, so a resume (or a
// continuation of it) that read its own journal alone would leave the earlier runs' trees
// registered for ever once the task is checkpointed. A tree listed twice is kept once.
export function withContinuedTrees(recovered: RecoveredRun, run: PriorRun, prior: readonly PriorRun[]): RecoveredRun {
  const byId = new Map(prior.map((p) => [p.paths.runId, p]));
  const chain: PriorRun[] = [];
  const seen = new Set<string>([run.paths.runId]);
  for (let id = run.journal.started?.continues ?? null; id !== null && !seen.has(id); ) {
    seen.add(id);
    const earlier = byId.get(id);
    if (earlier === undefined) break;
    chain.unshift(earlier);
    id = earlier.journal.started?.continues ?? null;
  }
  if (chain.length === 0) return recovered;
  const trees = new Map<string, Array<{ attempt: number; worktree: string }>>();
  for (const source of [...chain.map((p) => p.journal.trees), recovered.trees])
    for (const [task, list] of source) {
      const merged = trees.get(task) ?? [];
      for (const t of list) if (!merged.some((m) => m.worktree === t.worktree)) merged.push(t);
      trees.set(task, merged);
    }
  return { ...recovered, trees };
}
