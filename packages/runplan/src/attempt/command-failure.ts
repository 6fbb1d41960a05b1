import { unreachable } from '@runplan/common';
import type { Execution } from '@runplan/settle';
import type { AgentState } from '../agent/consumer.js';
import { PROVIDER_MAX_WAIT_MS, type TaskSpec } from '../plan/types.js';
import { maskSecrets } from '../plan/secrets.js';
import { textTail } from '../host/evidence.js';
import { classifyCommand, type CommandOutcome } from '../repair/classify.js';
import type { AttemptFailureData } from '../events/types.js';
import { fail } from './failure.js';
import type { Attempt } from './record.js';

/** What the message of a failed command is made of. */
export interface Settled {
  execution: Execution;
  state: AgentState | undefined;
  /** The first transport error (EPIPE on the prompt, a reader error), masked; null: none. */
  error: string | null;
}

// What the command's settlement means for the attempt (undefined: it succeeded). The
// class comes from repair/classify.ts (the one classification); a transport error or survivors of
// teardown fail an otherwise clean exit. The caller adds the stderr tail as evidence.
export function commandFailure(a: Attempt, s: Settled): AttemptFailureData | undefined {
  const { execution, state, error } = s;
  const c = classifyCommand(execution, state, a.task);
  if (c !== undefined) {
    const failed = fail(c.reason, 'command', maskSecrets(commandMessage(c.reason, s, a.task), a.ctx.secrets));
    if (c.class === 'provider' && state?.resetAtMs !== undefined) {
      failed.resetAtMs = state.resetAtMs;
      const tooFar = resetTooFar(a, state.resetAtMs, failed.message);
      if (tooFar !== undefined) return tooFar;
    }
    return failed;
  }
  if (error !== null) return fail('transport_error', 'command', error);
  if (execution.teardown.result === 'failed') {
    return fail('teardown_failed', 'command', `processes survived teardown: ${execution.teardown.survivors.join(' ')}`);
  }
  return undefined;
}

// A provider reset further away than `provider_max_wait`: the run stops (never retried) with
// the reset time and the exact command to rerun after it, instead of waiting for days.
function resetTooFar(a: Attempt, resetAtMs: number, refused: string): AttemptFailureData | undefined {
  const maxWaitMs = a.task.repair.providerMaxWaitMs ?? PROVIDER_MAX_WAIT_MS;
  if (resetAtMs - Date.now() <= maxWaitMs) return undefined;
  const at = new Date(resetAtMs).toISOString();
  const message = `${refused}; the limit resets at ${at}, later than provider_max_wait (${maxWaitMs}ms): rerun after the reset with: runplan run ${a.ctx.plan.file}`;
  return { ...fail('provider_reset_too_far', 'command', message), resetAtMs };
}

/** What each format's terminal line is, for the no_result message. */
const TERMINAL_LINES: Record<AgentState['format'], string> = {
  'claude-stream-json': 'a result line',
  'codex-json': 'a turn.completed or turn.failed line',
  'gemini-stream-json': 'a result line',
  'gemini-json': 'its one JSON object',
  'cursor-stream-json': 'a result line',
  text: 'its terminal line',
};

// The message for people of each way a command can fail.
export function commandMessage(reason: CommandOutcome, s: Settled, task: Pick<TaskSpec, 'deadlineMs' | 'stallMs'>): string {
  const { execution, state, error } = s;
  switch (reason) {
    case 'interrupted':
      return 'the run was interrupted';
    case 'timed_out':
      return `the command passed its deadline (${execution.deadlineMs ?? task.deadlineMs}ms)`;
    case 'stalled':
      return `the command wrote nothing for ${task.stallMs}ms`;
    case 'spawn_failed':
      return error ?? 'the command could not be started';
    case 'signaled':
      return `the command was killed by ${execution.signal}`;
    case 'blocked':
      return `the agent is blocked: ${state?.blocked ?? `exit ${execution.exitCode}`}`;
    case 'provider_limited':
      // The provider's own words ("…try again at 12:16 PM") say when to come back.
      return `the provider refused (rate limit or overload), exit ${execution.exitCode}${state?.errorMessage ? `: ${state.errorMessage}` : ''}`;
    case 'agent_error':
      return `the agent reported an error: ${state?.errorMessage ?? ''}`;
    case 'agent_auth_failed':
      return `the agent is not authenticated: ${state?.errorMessage ?? ''} — log it in (claude: /login; codex: codex login) or set its API key in the task's env, then rerun`;
    case 'agent_config_invalid':
      return `the agent's configuration is invalid: ${state?.errorMessage ?? ''} — fix the model (or the setting named) in the task's command, then rerun`;
    case 'turn_limit':
      return `the agent reached its session turn limit (exit ${execution.exitCode})${state?.errorMessage ? `: ${state.errorMessage}` : ''}`;
    case 'no_result':
      return `the agent's stream ended without ${TERMINAL_LINES[state?.format ?? 'text']} (torn, or killed behind a wrapper), exit ${execution.exitCode}`;
    case 'exited':
      return `the command exited ${execution.exitCode}`;
    default:
      return unreachable(reason);
  }
}

// A failed command's evidence: the tail of its stderr, plus the error the agent reported on
// stdout (an is_error result, a turn.failed), which stderr often lacks. Without it two
// different errors an agent reported would fingerprint alike (a repeated_failure) and the
// retry prompt would say nothing of what went wrong.
export function commandEvidence(stderrTail: string, state: AgentState | undefined, secrets: readonly string[]): string {
  const reported = state?.isError === true ? state.errorMessage?.trim() : undefined;
  if (reported === undefined || reported === '' || stderrTail.includes(reported)) return stderrTail;
  const line = maskSecrets(`agent reported: ${textTail(reported, 2000)}`, secrets);
  return stderrTail === '' ? line : `${stderrTail.replace(/\n?$/, '\n')}${line}`;
}
