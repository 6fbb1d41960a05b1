import type { Execution } from '@runplan/settle';
import type { AgentState } from '../agent/consumer.js';
import { maskSecrets } from '../plan/secrets.js';
import { classifyCommand } from '../repair/classify.js';
import type { AttemptFailureData } from '../events/types.js';
import { fail } from './failure.js';
import type { Attempt } from './record.js';

// What the command's settlement means for the attempt (undefined: it succeeded). The
// class comes from repair/classify.ts (the one classification); a transport error or survivors of
// teardown fail an otherwise clean exit. The caller adds the stderr tail as evidence.
export function commandFailure(
  a: Attempt,
  s: { execution: Execution; state: AgentState | undefined; error: string | null },
): AttemptFailureData | undefined {
  const { task } = a;
  const { execution, state, error } = s;
  const c = classifyCommand(execution, state, task);
  if (c !== undefined) {
    const messages: Record<string, string> = {
      interrupted: 'the run was interrupted',
      timed_out: `the command passed its deadline (${execution.deadlineMs ?? task.deadlineMs}ms)`,
      stalled: `the command wrote nothing for ${task.stallMs}ms`,
      spawn_failed: error ?? 'the command could not be started',
      signaled: `the command was killed by ${execution.signal}`,
      blocked: `the agent is blocked: ${state?.blocked ?? `exit ${execution.exitCode}`}`,
      provider_limited: `the provider refused (rate limit or overload), exit ${execution.exitCode}`,
      agent_error: `the agent reported an error: ${state?.errorMessage ?? ''}`,
      exited: `the command exited ${execution.exitCode}`,
    };
    const failed = fail(c.class, c.reason, 'command', maskSecrets(messages[c.reason] ?? c.reason, a.ctx.secrets));
    if (c.class === 'provider' && state?.resetAtMs !== undefined) failed.resetAtMs = state.resetAtMs;
    return failed;
  }
  if (error !== null) return fail('task', 'transport_error', 'command', error);
  if (execution.teardown.result === 'failed') {
    return fail('teardown', 'teardown_failed', 'command', `processes survived teardown: ${execution.teardown.survivors.join(' ')}`);
  }
  return undefined;
}
