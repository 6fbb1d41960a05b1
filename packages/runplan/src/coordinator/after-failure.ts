import type { AttemptResult } from '../attempt/run-attempt.js';
import type { AttemptFailureData } from '../events/types.js';
import type { TaskSpec } from '../plan/types.js';
import { decideRepair, emptyHistory, failureFingerprint, recordFailure } from '../repair/index.js';
import type { RunParts } from './parts.js';

/** A failed attempt, as the scheduler hands it on. */
export type FailedAttempt = Extract<AttemptResult, { ok: false }>;

/** What repair made of a failed attempt: dispatch the task again after a delay (provider waits: at `retryAtMs`), or stop the run. */
export type AfterFailure = { retryInMs: number; retryAtMs?: number } | { stop: AttemptFailureData };

// After a failed attempt: fingerprint it, ask repair.ts, journal the decision (before any
// re-dispatch, so counts survive a crash). Returns the delay of a retry, or the run's failure.
export async function afterFailure(parts: RunParts, task: TaskSpec, r: FailedAttempt): Promise<AfterFailure> {
  const { ctx, ledger } = parts;
  const f = r.failure;
  const contractDigest = ctx.contractDigests.get(task.id) ?? '';
  const fingerprint = failureFingerprint({ ...f, baseCommit: r.baseCommit, contractDigest }, r.ownPaths);
  const history = ledger.histories.get(task.id) ?? emptyHistory();
  const decision = decideRepair({ ...f, fingerprint }, history, task.repair);
  ledger.histories.set(task.id, recordFailure(history, { class: f.class, fingerprint, attempt: r.attempt }));
  await ctx.emit('repair-decided', {
    taskId: task.id,
    attempt: r.attempt,
    class: f.class,
    reason: f.reason,
    fingerprint,
    action: decision.action,
    changed: decision.action === 'retry' ? decision.changed : null,
    delayMs: decision.action === 'retry' ? decision.delayMs : 0,
    stopReason: decision.action === 'stop' ? decision.reason : null,
    detail: decision.action === 'stop' ? decision.detail : null,
  });
  if (decision.action === 'retry') {
    const retryAtMs = f.class === 'provider' && decision.delayMs > 0 ? await providerWait(parts, r, decision.delayMs) : undefined;
    ledger.lastFailure.set(task.id, { attempt: r.attempt, failure: f, ...(r.worktree !== undefined ? { worktree: r.worktree } : {}) });
    return { retryInMs: decision.delayMs, ...(retryAtMs !== undefined ? { retryAtMs } : {}) };
  }
  // A repeat is its own reason (the run stopped because nothing changed); an exhausted
  // cap or a class never retried keeps the failure's reason, the detail says which.
  const message = decision.reason === 'not_retryable' ? f.message : `${f.message} (${decision.detail})`;
  return { stop: decision.reason === 'repeated_failure' ? { ...f, reason: 'repeated_failure', message } : { ...f, message } };
}

// Journals the wait for the provider (progress, status and the report show it) and returns
// when the task may be dispatched again: the provider's own reset when it named one, else
// the backoff from now.
async function providerWait(parts: RunParts, r: FailedAttempt, delayMs: number): Promise<number> {
  const f = r.failure;
  const reset = f.resetAtMs !== undefined && Number.isFinite(f.resetAtMs);
  const retryAtMs = reset ? Math.max(Date.now(), Math.ceil(f.resetAtMs!)) : Date.now() + delayMs;
  await parts.ctx.emit('provider-wait', {
    taskId: r.taskId,
    attempt: r.attempt,
    reason: f.reason,
    until: new Date(retryAtMs).toISOString(),
    delayMs,
    source: reset ? 'reset' : 'backoff',
  });
  return retryAtMs;
}
