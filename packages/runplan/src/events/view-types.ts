// What the run view says of one attempt or task (events/view.ts).

/** An attempt that started and never closed: a crashed coordinator's leftover. */
export interface OpenAttempt {
  taskId: string;
  attempt: number;
  ownerTag: string;
  /** Where its processes' cgroups are (attempt-started `cgroupParent`); null when none or not journaled. */
  cgroupParent: string | null;
  evidenceDir: string;
  /** The attempt's git worktree ('' when its dir could not be rendered). */
  worktree: string;
  /** Whether a command-settled naming no loop round was journaled (its usage is then already counted). */
  settled: boolean;
  /** The loop rounds whose command-settled was journaled (their usage is counted); the round a crash interrupted is not among them. */
  settledRounds: number[];
  /** `slurm`: its commands ran as Slurm jobs named by its ownerTag (absent: locally). */
  executor?: 'slurm';
}

/** A task repair stopped: not dispatched again on the same inputs (see decideRun). */
export interface StoppedTask {
  class: string;
  reason: string;
  detail: string;
  contractDigest: string | null;
  /** A stop for a provider reset past `provider_max_wait`: when the limit resets (ms), else null. */
  resetAtMs: number | null;
}

/**
 * A stop for a provider limit whose reset has passed by `now`: over, as time is the input that
 * changed (a continuation dispatches the task again, with its failure history started over).
 */
export function resetHasPassed(s: StoppedTask, now: number): boolean {
  return s.resetAtMs !== null && s.resetAtMs <= now;
}

/**
 * The stop a repair-decided `stop` journals; a stop for a provider reset past
 * `provider_max_wait` keeps the reset time its failure named.
 */
export function stoppedTaskOf(
  d: { class: unknown; reason: unknown; stopReason?: unknown; detail?: unknown },
  failure: { resetAtMs?: number } | undefined,
  contractDigest: string | null,
): StoppedTask {
  const reset = d.reason === 'provider_reset_too_far' ? failure?.resetAtMs : undefined;
  return {
    class: String(d.class),
    reason: String(d.stopReason),
    detail: String(d.detail),
    contractDigest,
    resetAtMs: typeof reset === 'number' && Number.isFinite(reset) ? reset : null,
  };
}

/**
 * The field of an attempt-started that is not what runplan writes (checksums intact, a hand
 * edit): folded, it made a resume journal `attempt-closed #1` for no task, or number the next
 * attempt NaN. Undefined when both are sound.
 */
export function malformedField(d: { taskId: unknown; attempt: unknown }): 'taskId' | 'attempt' | undefined {
  if (typeof d.taskId !== 'string') return 'taskId';
  return typeof d.attempt !== 'number' || !Number.isSafeInteger(d.attempt) || d.attempt < 1 ? 'attempt' : undefined;
}
