import type { SettleReason } from '@runplan/settle';
import type { AgentState } from '../agent/state.js';
import type { RepairCaps } from '../plan/types.js';
import type { FailureClass } from '../events/types.js';

/** A classified failure: the class and the reason slug for journal and receipt. */
export interface Classified {
  class: FailureClass;
  reason: string;
}

/** What classifyCommand needs from settle's Execution. */
export interface CommandSettlement {
  reason: SettleReason;
  exitCode: number | null;
}

/**
 * Classifies the command's settlement together with what its output said; undefined means
 * the command succeeded. In order: interrupted; spawn_failed → environment; blocked (the
 * marker line or `blocked_exit`) → needs_human, whatever else happened. Otherwise a
 * command that exited 0 and whose agent reported no error succeeded — a rate limit the
 * agent got past is no failure. A failed command is: provider (limit seen by the
 * interpreter, or an exit code in `provider_exit_codes`) → timeout (timed_out, stalled) →
 * task: `agent_error` (the agent's own report, also with exit 0), `signaled`, `exited`.
 */
export function classifyCommand(
  execution: CommandSettlement,
  agent: Pick<AgentState, 'blocked' | 'providerLimited' | 'isError'> | undefined,
  task: { blockedExit?: number; repair: Pick<RepairCaps, 'providerExitCodes'> },
): Classified | undefined {
  const code = execution.exitCode;
  if (execution.reason === 'interrupted') return { class: 'interrupted', reason: 'interrupted' };
  if (execution.reason === 'spawn_failed') return { class: 'environment', reason: 'spawn_failed' };
  if (agent?.blocked !== undefined || (task.blockedExit !== undefined && code === task.blockedExit))
    return { class: 'needs_human', reason: 'blocked' };
  const failed = execution.reason !== 'exited' || code !== 0 || agent?.isError === true;
  if (!failed) return undefined;
  if (agent?.providerLimited || (code !== null && task.repair.providerExitCodes.includes(code)))
    return { class: 'provider', reason: 'provider_limited' };
  if (execution.reason === 'timed_out') return { class: 'timeout', reason: 'timed_out' };
  if (execution.reason === 'stalled') return { class: 'timeout', reason: 'stalled' };
  if (agent?.isError) return { class: 'task', reason: 'agent_error' };
  if (execution.reason === 'signaled') return { class: 'task', reason: 'signaled' };
  return { class: 'task', reason: 'exited' };
}

// A gate's (or an until verify's) settlement: undefined when it passed.
export function classifyGate(execution: CommandSettlement): Classified | undefined {
  switch (execution.reason) {
    case 'interrupted':
      return { class: 'interrupted', reason: 'interrupted' };
    case 'spawn_failed':
      return { class: 'environment', reason: 'spawn_failed' };
    case 'timed_out':
    case 'stalled':
      return { class: 'timeout', reason: execution.reason };
    case 'signaled':
      return { class: 'gate', reason: 'gate_failed' };
    case 'exited':
      return execution.exitCode === 0 ? undefined : { class: 'gate', reason: 'gate_failed' };
  }
}
