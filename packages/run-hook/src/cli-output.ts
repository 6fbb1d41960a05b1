import { unreachable } from '@runplan/common';
import { exitCodeFor } from '@runplan/settle';
import type { HookOutcome } from './outcome.js';
import type { HookRun } from './run.js';

// What run-hook's CLI makes of a hook's run: its exit code, its stderr line, its --json.

// The one exit-code mapping: settle's for anything executed, 125 for a refusal.
export function exitCode({ outcome, execution }: HookRun): number {
  switch (outcome.reason) {
    case 'template_refused':
      return 125;
    case 'ok':
    case 'exited':
    case 'signaled':
    case 'timed_out':
    case 'spawn_failed':
    case 'interrupted':
      return execution ? exitCodeFor(execution) : 125;
    default:
      return unreachable(outcome);
  }
}

// What to tell a person on stderr; a plain nonzero exit speaks through the hook's own output.
export function stderrLine(outcome: HookOutcome): string | undefined {
  switch (outcome.reason) {
    case 'ok':
      return undefined;
    case 'exited':
      return outcome.teardown?.result === 'failed' ? outcome.message : undefined;
    case 'signaled':
      // As in a shell pipeline, a hook ended by SIGPIPE (`run-hook -- cmd | head -1`) is not news.
      return outcome.signal === 'SIGPIPE' ? undefined : outcome.message;
    case 'timed_out':
    case 'spawn_failed':
    case 'template_refused':
    case 'interrupted':
      return outcome.message;
    default:
      return unreachable(outcome);
  }
}

export function jsonOutcome({ outcome, refusal }: HookRun): object {
  return refusal ? { ...outcome, refusal } : outcome;
}
