import type { FailureClass, ReceiptReason } from '../events/types.js';

/**
 * What the next attempt would change. `evidence`: the prompt carries the previous
 * failure's evidence; `time`: the provider is asked again after waiting; `base`: the task
 * is re-dispatched from the new integration head.
 */
export type ChangedInput = 'evidence' | 'time' | 'base';

type CapKey = 'task' | 'gate' | 'timeout' | 'provider' | 'integration';

/** One row of the transition table. */
interface Transition {
  /** Which cap counts this class's attempts; undefined = never retried. */
  cap?: CapKey;
  /** What the retry changes. */
  changed?: ChangedInput;
  /** Whether an identical fingerprint may be dispatched again (only when time is the change). */
  repeatAllowed: boolean;
}

/**
 * The one transition table (DESIGN.md "Failure classes and repair", issue 8):
 *
 *   class         cap (default)     retry while               changes
 *   task          task (3)          fingerprint new           evidence in the prompt
 *   gate          gate (3)          fingerprint new           evidence in the prompt
 *   timeout       timeout (2)       fingerprint new           evidence in the prompt
 *   provider      provider (4)      always (until cap)        time (backoff)
 *   integration   integration (2)   fingerprint new           base (new integration head)
 *   environment, teardown, invariant, budget, stagnation, needs_human, engine,
 *   interrupted, abandoned          never
 *
 * Also never retried whatever the class: reason `rounds_exhausted` (a loop that used all
 * its rounds), `land_moved` (a landing branch someone else moved) and `branch_moved` (the
 * integration branch someone else moved: a new attempt would find it moved again) and
 * `provider_reset_too_far` (a reset past `provider_max_wait`: rerun after it).
 */
export const TRANSITIONS: Readonly<Record<FailureClass, Transition>> = Object.freeze({
  task: { cap: 'task', changed: 'evidence', repeatAllowed: false },
  gate: { cap: 'gate', changed: 'evidence', repeatAllowed: false },
  timeout: { cap: 'timeout', changed: 'evidence', repeatAllowed: false },
  provider: { cap: 'provider', changed: 'time', repeatAllowed: true },
  integration: { cap: 'integration', changed: 'base', repeatAllowed: false },
  environment: { repeatAllowed: false },
  teardown: { repeatAllowed: false },
  invariant: { repeatAllowed: false },
  budget: { repeatAllowed: false },
  stagnation: { repeatAllowed: false },
  needs_human: { repeatAllowed: false },
  engine: { repeatAllowed: false },
  interrupted: { repeatAllowed: false },
  abandoned: { repeatAllowed: false },
});

export const NEVER_RETRIED_REASONS: readonly ReceiptReason[] = ['rounds_exhausted', 'land_moved', 'branch_moved', 'provider_reset_too_far'];

/** Retried once whatever their class (environment): the engine lost the job, not the task. */
export const RETRIED_ONCE_REASONS: readonly ReceiptReason[] = ['slurm_node_failed', 'slurm_preempted'];

/** Coordinator crashes per task before the task fails with class `engine`. */
export const CRASH_CAP = 2;

/** Longest exponential provider backoff when the provider names no reset time. */
export const MAX_BACKOFF_MS = 60 * 60_000;
