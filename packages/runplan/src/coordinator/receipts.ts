import { shownCost, type RunCompleteData, type RunFailedData } from '../events/types.js';
import { maskSecrets } from '../plan/secrets.js';
import type { RunParts } from './parts.js';
import type { StopCause } from './types.js';

// run-complete's data: the branch and its head, what landed, and the run's totals so far.
export function completeReceipt(parts: RunParts, landed: string | null): RunCompleteData {
  const { ctx, ledger } = parts;
  return {
    logicalRunId: ctx.runId,
    branch: ctx.integration.branchRef,
    resultCommit: ctx.integration.head,
    landed,
    tasks: ledger.checkpoints.size,
    attempts: ledger.totalAttempts(),
    usage: ledger.usage,
    costUsd: shownCost(ledger.costUsd),
    durationMs: Date.now() - ctx.startedAt.getTime(),
    ...refsFailed(parts),
  };
}

// The receipt's `refsFailed`: every ref-failed the run journaled (absent when none).
function refsFailed(parts: RunParts): { refsFailed?: RunCompleteData['refsFailed'] } {
  const failures = parts.journal.refFailures;
  return failures.length > 0 ? { refsFailed: [...failures] } : {};
}

// run-failed's data: the failure that ended the run (secrets masked), the operator's signal
// when it was an interruption (`signalReason` is the abort reason), and the totals so far.
export function failedReceipt(parts: RunParts, stop: StopCause, signalReason: unknown): RunFailedData {
  const { ctx, ledger } = parts;
  const f = stop.failure;
  return {
    logicalRunId: ctx.runId,
    class: f.class,
    reason: f.reason,
    message: maskSecrets(f.message, ctx.secrets),
    task: stop.task,
    phase: f.phase,
    evidence: stop.evidence,
    signal: f.class === 'interrupted' && typeof signalReason === 'string' ? signalReason : null,
    ...(f.detail !== undefined ? { detail: f.detail } : {}),
    ...(stop.failed !== undefined ? { failed: stop.failed } : {}),
    ...(stop.firstFailure !== undefined ? { firstFailure: stop.firstFailure } : {}),
    ...(stop.notDispatched !== undefined && stop.notDispatched.length > 0 ? { notDispatched: stop.notDispatched } : {}),
    ...refsFailed(parts),
    tasksDone: ledger.checkpoints.size,
    attempts: ledger.totalAttempts(),
    usage: ledger.usage,
    costUsd: shownCost(ledger.costUsd),
    durationMs: Date.now() - ctx.startedAt.getTime(),
  };
}
