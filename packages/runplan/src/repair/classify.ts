import type { SettleReason } from '@runplan/settle';
import type { AgentState } from '../agent/state.js';
import type { AgentFormat, RepairCaps } from '../plan/types.js';
import { unreachable } from '@runplan/common';
import { classified, type ClassifiedAs, type SettlementReason } from '../events/reasons.js';

/** The ways a command (or a gate) settles as a failure: settle's, or the agent's own. */
export type CommandOutcome = SettlementReason | 'interrupted';

/** A classified failure: the reason slug and the class the reason table gives it. */
export type Classified = ClassifiedAs<CommandOutcome | 'gate_failed'>;

/** What classifyCommand needs from settle's Execution. */
export interface CommandSettlement {
  reason: SettleReason;
  exitCode: number | null;
  /** `consumer`: torn down result_grace after its terminal line; that line's outcome stands. */
  endedBy?: 'consumer';
}

/**
 * Classifies the command's settlement together with what its output said; undefined means
 * the command succeeded. In order: interrupted; spawn_failed → environment; blocked (the
 * marker line or `blocked_exit`) → needs_human, whatever else happened. Otherwise a
 * command that exited 0 and whose agent reported no error succeeded — a rate limit the
 * agent got past is no failure. A failed command is: provider (limit seen by the
 * interpreter, or an exit code in `provider_exit_codes`) → environment (`agent_auth_failed`,
 * `agent_config_invalid`: the agent said so) → timeout (timed_out, stalled) →
 * task: `agent_error` (the agent's own report, also with exit 0), `no_result` (a JSON stream
 * that ended without its terminal line, whatever the exit code), `signaled`, `exited`.
 */
export function classifyCommand(
  execution: CommandSettlement,
  agent:
    | (Pick<AgentState, 'blocked' | 'providerLimited' | 'isError'> & Partial<Pick<AgentState, 'format' | 'sawResult' | 'setupFailure'>>)
    | undefined,
  task: { blockedExit?: number; repair: Pick<RepairCaps, 'providerExitCodes'> },
): ClassifiedAs<CommandOutcome> | undefined {
  // An agent ended after its terminal line settled as if it had exited 0 then.
  const ended = execution.endedBy === 'consumer';
  const code = ended ? 0 : execution.exitCode;
  const reason = ended ? 'exited' : execution.reason;
  if (execution.reason === 'interrupted') return classified('interrupted');
  if (execution.reason === 'spawn_failed') return classified('spawn_failed');
  if (agent?.blocked !== undefined || (task.blockedExit !== undefined && code === task.blockedExit)) return classified('blocked');
  // A JSON stream without its terminal line was torn (or killed behind a wrapper that
  // exited 0): never a success.
  const noResult = agent?.format !== undefined && agent.format !== 'text' && agent.sawResult === false;
  const failed = reason !== 'exited' || code !== 0 || agent?.isError === true || noResult;
  if (!failed) return undefined;
  if (agent?.providerLimited || (code !== null && task.repair.providerExitCodes.includes(code))) return classified('provider_limited');
  const gemini = geminiExit(agent?.format, reason === 'exited' ? code : null);
  if (gemini !== undefined) return classified(gemini);
  if (agent?.isError && agent.setupFailure === 'auth') return classified('agent_auth_failed');
  if (agent?.isError && agent.setupFailure === 'config') return classified('agent_config_invalid');
  if (execution.reason === 'timed_out') return classified('timed_out');
  if (execution.reason === 'stalled') return classified('stalled');
  if (agent?.isError) return classified('agent_error');
  if (noResult && reason === 'exited') return classified('no_result');
  if (reason === 'signaled') return classified('signaled');
  return classified('exited');
}

// Gemini CLI's own exit codes (gemini-cli packages/core/src/utils/exitCodes.ts): 41 auth,
// 42 input, 44 sandbox, 52 config → environment; 53 the session's turn limit → task.
function geminiExit(
  format: AgentFormat | undefined,
  code: number | null,
): 'agent_auth_failed' | 'agent_config_invalid' | 'turn_limit' | undefined {
  if (format !== 'gemini-json' && format !== 'gemini-stream-json') return undefined;
  if (code === 41) return 'agent_auth_failed';
  if (code === 42 || code === 44 || code === 52) return 'agent_config_invalid';
  if (code === 53) return 'turn_limit';
  return undefined;
}

// A gate's (or an until verify's) settlement: undefined when it passed.
export function classifyGate(execution: CommandSettlement): Classified | undefined {
  switch (execution.reason) {
    case 'interrupted':
      return classified('interrupted');
    case 'spawn_failed':
      return classified('spawn_failed');
    case 'timed_out':
    case 'stalled':
      return classified(execution.reason);
    case 'signaled':
      return classified('gate_failed');
    case 'exited':
      return execution.exitCode === 0 ? undefined : classified('gate_failed');
    default:
      return unreachable(execution.reason);
  }
}
