import { runAttempt } from '../attempt/run-attempt.js';
import type { TaskSpec } from '../plan/types.js';
import { attemptEvidenceDir } from '../host/state.js';
import type { PreviousAttempt } from '../repair/retry-prompt.js';
import { JournalFailure } from './context.js';
import type { RunParts } from './parts.js';
import type { Settled } from './scheduler.js';

// The worktree of a task's earlier attempt a resumed run knows from the journal (kept until a checkpoint).
function worktreeOf(parts: RunParts, taskId: string, attempt: number): { worktree?: string } {
  const tree = parts.ledger.trees.get(taskId)?.find((t) => t.attempt === attempt)?.worktree;
  return tree !== undefined ? { worktree: tree } : {};
}

// Runs an attempt and turns anything it throws into a value the scheduler can read.
export async function dispatch(parts: RunParts, task: TaskSpec, attempt: number): Promise<Settled> {
  try {
    const last = parts.ledger.lastFailure.get(task.id);
    const previous: PreviousAttempt | undefined =
      last === undefined
        ? undefined
        : {
            ...last,
            evidenceDir: attemptEvidenceDir(parts.ctx.run, task.id, last.attempt),
            ...(last.worktree !== undefined ? { worktree: last.worktree } : worktreeOf(parts, task.id, last.attempt)),
          };
    const result = await runAttempt(parts.ctx, task, attempt, previous);
    // A failed attempt's worktree stays as evidence until the task is checkpointed, then goes
    // with its earlier attempts' (removeEarlierTrees): this run's as a resumed run's.
    if (!result.ok && result.worktree !== undefined) {
      const trees = parts.ledger.trees.get(task.id) ?? [];
      parts.ledger.trees.set(task.id, [...trees.filter((t) => t.attempt !== attempt), { attempt, worktree: result.worktree }]);
    }
    return { kind: 'attempt', taskId: task.id, result };
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    if (e instanceof JournalFailure || parts.journal.failure) return { kind: 'journal', taskId: task.id, error };
    throw error;
  }
}
