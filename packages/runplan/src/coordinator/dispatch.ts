import { runAttempt } from '../attempt/run-attempt.js';
import type { TaskSpec } from '../plan/types.js';
import { JournalFailure } from './context.js';
import type { RunParts } from './parts.js';
import type { Settled } from './scheduler.js';

// Runs an attempt and turns anything it throws into a value the scheduler can read.
export async function dispatch(parts: RunParts, task: TaskSpec, attempt: number): Promise<Settled> {
  try {
    const previous = parts.ledger.lastFailure.get(task.id);
    return { kind: 'attempt', taskId: task.id, result: await runAttempt(parts.ctx, task, attempt, previous) };
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    if (e instanceof JournalFailure || parts.journal.failure) return { kind: 'journal', taskId: task.id, error };
    throw error;
  }
}
