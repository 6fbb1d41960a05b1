import type { RunParts } from '../coordinator/parts.js';
import { removeEarlierTrees } from '../coordinator/worktrees.js';
import type { RecoveredRun } from './recover.js';

// Continuation: adopt each still-valid checkpoint of the failed run (its task is not dispatched).
export async function adopt(parts: RunParts, origin: string, recovered: RecoveredRun): Promise<void> {
  const { ctx, ledger } = parts;
  ledger.load(recovered);
  ctx.integration.head = recovered.head;
  ledger.forgetAttempts();
  for (const cp of recovered.checkpoints) await ctx.emit('checkpoint-adopted', { origin, taskId: cp.taskId, checkpoint: cp });
  for (const taskId of ledger.checkpoints.keys()) await removeEarlierTrees(parts, taskId);
}

// `--retry TASK`: the operator states the cause changed; the task's history starts over.
export async function operatorRetries(parts: RunParts, tasks: readonly string[]): Promise<void> {
  for (const taskId of tasks) {
    parts.ledger.histories.delete(taskId);
    await parts.ctx.emit('operator-retry', { taskId });
  }
}
