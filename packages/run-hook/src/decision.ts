import { unreachable } from '@runplan/common';
import type { HookOutcome, RunOutcome } from './outcome.js';

/**
 * What a pre_run hook's outcome means for the attempt. A hook exists to put the run in a
 * state the command can be trusted with, so anything but ok stops the spawn (and post_run
 * is then never asked: there is no verdict to check). An interruption is not the hook's
 * failure: the attempt is interrupted, as it would be during the command itself.
 */
export type PreRunDecision =
  | { proceed: true }
  | { proceed: false; outcome: 'failed'; reason: 'pre_run_failed' }
  | { proceed: false; outcome: 'interrupted'; reason: 'interrupted' };

export function afterPreRun(hook: HookOutcome): PreRunDecision {
  switch (hook.reason) {
    case 'ok':
      return { proceed: true };
    case 'interrupted':
      return { proceed: false, outcome: 'interrupted', reason: 'interrupted' };
    case 'exited':
    case 'signaled':
    case 'timed_out':
    case 'spawn_failed':
    case 'template_refused':
      return { proceed: false, outcome: 'failed', reason: 'pre_run_failed' };
    default:
      return unreachable(hook);
  }
}

/** The attempt's outcome once post_run has had its say; `demoted` marks a success it took away. */
export interface PostRunDecision {
  outcome: RunOutcome;
  reason: string;
  demoted: boolean;
}

/**
 * post_run can demote, never promote: a hook that is anything but ok turns a `success`
 * into `failed` / `post_run_failed`; every other outcome stays exactly as the process
 * earned it, whatever the hook did. An interrupted hook makes the attempt `interrupted`
 * (that is the operator's stop, not a verdict, so it is never counted as a demotion).
 */
export function afterPostRun(run: { outcome: RunOutcome; reason: string }, hook: HookOutcome): PostRunDecision {
  switch (hook.reason) {
    case 'interrupted':
      return { outcome: 'interrupted', reason: 'interrupted', demoted: false };
    case 'ok':
      return { outcome: run.outcome, reason: run.reason, demoted: false };
    case 'exited':
    case 'signaled':
    case 'timed_out':
    case 'spawn_failed':
    case 'template_refused':
      if (run.outcome === 'success') return { outcome: 'failed', reason: 'post_run_failed', demoted: true };
      return { outcome: run.outcome, reason: run.reason, demoted: false };
    default:
      return unreachable(hook);
  }
}
