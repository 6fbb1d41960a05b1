import { join } from 'node:path';
import { err } from '@runplan/common';
import { render } from '@runplan/workdir';
import { newRunOwnerTag } from '../resume/leftovers.js';
import type { TaskSpec } from '../plan/types.js';
import { planUsesSlurm } from '../executor/index.js';
import { sha256Hex } from '../plan/digest.js';
import { maskSecrets } from '../plan/secrets.js';
import { retryPrompt, type PreviousAttempt } from '../repair/retry-prompt.js';
import { JournalFailure, type RunContext } from '../coordinator/context.js';
import type { AttemptFailureData, CheckpointData, UsageTotals } from '../events/types.js';
import { attemptEvidenceDir } from '../host/state.js';
import { thrownFailure, type StepResult } from './failure.js';
import { pipeline } from './pipeline.js';
import { attemptOwnership } from './ownership.js';
import { newAttempt } from './record.js';
import { budgetVars, workdirVars } from './vars.js';
import { removeWorktree } from './workspace.js';

/** How one attempt ended; a journal failure is not an outcome but a thrown JournalFailure. */
export type AttemptResult =
  | { ok: true; taskId: string; attempt: number; checkpoint: CheckpointData; survivors: number[]; usage: UsageTotals; costUsd: number }
  | {
      ok: false;
      taskId: string;
      attempt: number;
      failure: AttemptFailureData;
      evidence: string[];
      usage: UsageTotals;
      costUsd: number;
      /** Fingerprint inputs: the base the attempt started from and its own paths (masked). */
      baseCommit: string;
      ownPaths: string[];
      /** The attempt's worktree, kept as evidence: a retry's prompt must not send its agent there. */
      worktree?: string;
    };

// Runs one attempt of a task, start to close, and journals every step (DESIGN "One attempt").
export async function runAttempt(ctx: RunContext, task: TaskSpec, attempt: number, previous?: PreviousAttempt): Promise<AttemptResult> {
  const started = Date.now();
  const ownerTag = newRunOwnerTag(ctx.runId);
  const baseCommit = ctx.integration.head;
  const evidenceDir = attemptEvidenceDir(ctx.run, task.id, attempt);
  // A retry's prompt carries the previous failure. A task with no prompt gets none on any
  // attempt: its command never reads a prompt, and evidence written to a stdin nobody reads
  // made the retry fail or pass by a race (EPIPE once the command had exited).
  const prompt =
    previous === undefined || task.prompt === undefined || task.prompt === ''
      ? (task.prompt ?? '')
      : retryPrompt(task.prompt, previous, (t) => maskSecrets(t, ctx.secrets));
  const baseVars = { ...workdirVars(ctx, task, attempt), ...budgetVars(ctx.plan.budget, ctx.spent()) };
  const planned = render(ctx.workdirTemplate, baseVars, 'workdir');
  const plannedDir = planned.ok ? planned.value : '';
  const ownership = attemptOwnership(ctx.plan);
  const a = newAttempt(ctx, task, { attempt, ownerTag, evidenceDir, ownership });
  const { rec } = a;

  await ctx.emit('attempt-started', {
    taskId: task.id,
    attempt,
    ownerTag,
    baseCommit,
    contractDigest: ctx.contractDigests.get(task.id) ?? '',
    promptDigest: sha256Hex(prompt),
    dir: plannedDir,
    worktree: plannedDir === '' ? '' : join(plannedDir, 'tree'),
    evidenceDir,
    dependencyCheckpointIds: task.needs.map((id) => ctx.checkpoints.get(id) ?? ''),
    cgroupParent: ownership.cgroupParent,
    ...(planUsesSlurm({ tasks: [task] }) ? { executor: 'slurm' as const } : {}),
  });

  // The one boundary: a journal failure goes on up; anything else thrown is a bug (or a
  // disk error no step caught) and becomes the attempt's failure.
  let outcome: StepResult<CheckpointData>;
  try {
    outcome = await pipeline(a, { baseVars, baseCommit, prompt });
  } catch (e) {
    if (e instanceof JournalFailure) throw e;
    outcome = err(thrownFailure(a, e));
  }

  const durationMs = Date.now() - started;
  if (!outcome.ok) {
    const failure = outcome.error;
    await ctx.emit('attempt-closed', {
      taskId: task.id,
      attempt,
      outcome: failure.class === 'interrupted' ? 'interrupted' : 'failed',
      reason: failure.reason,
      class: failure.class,
      phase: failure.phase,
      failure,
      checkpointId: null,
      evidence: rec.evidence,
      survivors: rec.survivors,
      durationMs,
    });
    const ownPaths = [plannedDir, evidenceDir].filter((p) => p !== '');
    return {
      ok: false,
      taskId: task.id,
      attempt,
      failure,
      evidence: rec.evidence,
      usage: rec.usage,
      costUsd: rec.costUsd,
      baseCommit,
      ownPaths,
      ...(rec.worktree !== undefined ? { worktree: rec.worktree } : {}),
    };
  }
  await removeWorktree(a);
  await ctx.emit('attempt-closed', {
    taskId: task.id,
    attempt,
    outcome: 'success',
    reason: 'ok',
    class: null,
    phase: null,
    failure: null,
    checkpointId: outcome.value.id,
    evidence: rec.evidence,
    survivors: rec.survivors,
    durationMs,
  });
  return {
    ok: true,
    taskId: task.id,
    attempt,
    checkpoint: outcome.value,
    survivors: rec.survivors,
    usage: rec.usage,
    costUsd: rec.costUsd,
  };
}
