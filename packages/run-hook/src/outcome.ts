import type { Execution } from '@runplan/settle';

/** How an attempt's command ended, as the coordinator records it (DESIGN.md "Templates"). */
export type RunOutcome = 'success' | 'failed' | 'timed_out' | 'interrupted';

/** The two places a hook runs; each is also the template tier its argv renders in. */
export type HookTier = 'pre_run' | 'post_run';

/** What settle did to the hook's process tree when it had to end it. */
export type TeardownReport = Execution['teardown'];

/** Why a hook did not succeed; `template_refused` means nothing was spawned. */
export type HookFailureReason = 'exited' | 'signaled' | 'timed_out' | 'spawn_failed' | 'template_refused' | 'interrupted';

/**
 * The result of one hook run. Both variants carry the same evidence fields so a caller
 * can journal either without branching: duration and the last bytes of each stream.
 */
export type HookOutcome =
  | {
      ok: true;
      reason: 'ok';
      exitCode: 0;
      durationMs: number;
      /** The last HOOK_TAIL_BYTES of stdout, decoded as UTF-8. */
      stdoutTail: string;
      stderrTail: string;
      /** The rendered argv that was executed. */
      argv: string[];
    }
  | {
      ok: false;
      reason: HookFailureReason;
      exitCode: number | null;
      signal: string | null;
      durationMs: number;
      stdoutTail: string;
      stderrTail: string;
      /** Absent when the template was refused: there was no argv to run. */
      argv?: string[];
      /** One line for people: what failed and where. */
      message: string;
      /** Present when settle had to end the tree (deadline, interruption, leftovers). */
      teardown?: TeardownReport;
    };

/** Every failure reason, for exhaustive tests and help text. */
export const HOOK_FAILURE_REASONS: readonly HookFailureReason[] = [
  'exited',
  'signaled',
  'timed_out',
  'spawn_failed',
  'template_refused',
  'interrupted',
];

/** Every run outcome, for exhaustive tests. */
export const RUN_OUTCOMES: readonly RunOutcome[] = ['success', 'failed', 'timed_out', 'interrupted'];
