import type { RepairCaps } from '../plan/types.js';
import { DEFAULT_CAPS } from '../plan/types.js';
import type { AttemptFailureData, FailureClass, RepairStop } from '../events/types.js';
import type { ClassifiedAs } from '../events/reasons.js';
import { CRASH_CAP, MAX_BACKOFF_MS, NEVER_RETRIED_REASONS, RETRIED_ONCE_REASONS, TRANSITIONS, type ChangedInput } from './transitions.js';

/** A task's failure history, counted from the journal (so a crash cannot reset it). */
export interface TaskHistory {
  /** Failed attempts so far (all classes). */
  attempts: number;
  byClass: Partial<Record<FailureClass, number>>;
  /**
   * Fingerprints of earlier failed attempts, oldest first, each with its attempt number (a
   * repeat names the attempt whose evidence dir holds the same failure; attempt numbers also
   * count crashed and successful attempts, so a list position is not one).
   */
  fingerprints: { fingerprint: string; attempt: number }[];
  /** Attempts lost to a coordinator crash (own cap, CRASH_CAP). */
  crashes: number;
}

/** What repair decides on: the failure (the one shape) and its fingerprint. */
export type RepairInput = Pick<AttemptFailureData, 'class' | 'reason' | 'resetAtMs'> & { fingerprint: string };

export type RepairDecision =
  | { action: 'retry'; delayMs: number; changed: ChangedInput }
  /** See RepairStop. */
  | { action: 'stop'; reason: RepairStop; detail: string };

export function emptyHistory(): TaskHistory {
  return { attempts: 0, byClass: {}, fingerprints: [], crashes: 0 };
}

// The history after one more failed attempt (a new object; the input is not changed).
export function recordFailure(history: TaskHistory, failure: { class: FailureClass; fingerprint: string; attempt: number }): TaskHistory {
  return {
    attempts: history.attempts + 1,
    byClass: { ...history.byClass, [failure.class]: (history.byClass[failure.class] ?? 0) + 1 },
    fingerprints: [...history.fingerprints, { fingerprint: failure.fingerprint, attempt: failure.attempt }],
    crashes: history.crashes,
  };
}

/**
 * Decides what follows a failed attempt. `history` holds the EARLIER failures of the task
 * (not this one). Order: never-retried class or reason → repeated fingerprint (except
 * provider) → cap (this failure counted) → retry with what changes.
 */
export function decideRepair(
  failure: RepairInput,
  history: TaskHistory,
  caps: RepairCaps = DEFAULT_CAPS,
  opts: { now?: number } = {},
): RepairDecision {
  const row = TRANSITIONS[failure.class];
  // A lost node or a preemption is the engine's, not the task's: one new attempt, as after a
  // coordinator crash. Any earlier environment failure of a task still running was one of these.
  if (RETRIED_ONCE_REASONS.includes(failure.reason)) {
    if ((history.byClass.environment ?? 0) === 0) return { action: 'retry', delayMs: 0, changed: 'base' };
    return { action: 'stop', reason: 'cap_exhausted', detail: `${failure.reason} again: retried once already` };
  }
  if (row.cap === undefined || row.changed === undefined) {
    return { action: 'stop', reason: 'not_retryable', detail: `class ${failure.class} is never retried` };
  }
  if (NEVER_RETRIED_REASONS.includes(failure.reason)) {
    return { action: 'stop', reason: 'not_retryable', detail: `${failure.reason} is never retried` };
  }
  const earlier = row.repeatAllowed ? undefined : history.fingerprints.find((e) => e.fingerprint === failure.fingerprint);
  if (earlier !== undefined) {
    return {
      action: 'stop',
      reason: 'repeated_failure',
      detail: `same failure as failed attempt ${earlier.attempt} (fingerprint ${failure.fingerprint.slice(0, 12)})`,
    };
  }
  const cap = caps[row.cap];
  const used = (history.byClass[failure.class] ?? 0) + 1;
  if (used >= cap) {
    return {
      action: 'stop',
      reason: 'cap_exhausted',
      detail: `${used} ${failure.class} failure${used === 1 ? '' : 's'}, cap ${row.cap} = ${cap}`,
    };
  }
  const delayMs = row.changed === 'time' ? providerDelay(failure, history, caps, opts.now ?? Date.now()) : 0;
  return { action: 'retry', delayMs, changed: row.changed };
}

// Wait until the reported reset, else backoff doubling per earlier provider failure.
export function providerDelay(failure: Pick<AttemptFailureData, 'resetAtMs'>, history: TaskHistory, caps: RepairCaps, now: number): number {
  if (failure.resetAtMs !== undefined && Number.isFinite(failure.resetAtMs)) return Math.max(0, Math.ceil(failure.resetAtMs - now));
  const earlier = history.byClass.provider ?? 0;
  return Math.min(MAX_BACKOFF_MS, caps.backoffMs * 2 ** earlier);
}

// After a coordinator crash lost an attempt: retry it, or fail the task with class engine.
export function decideAfterCrash(
  history: TaskHistory,
): { action: 'retry' } | ({ action: 'stop'; detail: string } & ClassifiedAs<'crash_cap_exhausted'>) {
  if (history.crashes + 1 > CRASH_CAP) {
    return {
      action: 'stop',
      class: 'engine',
      reason: 'crash_cap_exhausted',
      detail: `the coordinator crashed ${history.crashes + 1} times during this task (cap ${CRASH_CAP})`,
    };
  }
  return { action: 'retry' };
}
