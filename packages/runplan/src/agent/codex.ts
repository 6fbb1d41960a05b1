import {
  addUsage,
  boundMessage,
  count,
  isProviderText,
  isRecord,
  jsonEvent,
  marksProviderLimit,
  marksSetupFailure,
  scanBlocked,
  warn,
  zeroUsage,
} from './state.js';
import type { AgentState, LineInterpreter, Usage } from './state.js';

// `codex exec --json`: one thread event per line.
//   thread.started            → session id (thread_id)
//   session.created           → session id (session_id; codex before thread events)
//   turn.completed.usage      → the THREAD's running total (codex-rs usage_from_last_total):
//                               per thread id the last snapshot counts, summed over threads
//                               (a command running `codex exec` then `codex exec resume` on
//                               one thread is not counted twice). codex's input_tokens
//                               INCLUDES the cached ones, so input = input_tokens -
//                               cached_input_tokens and cacheRead = cached_input_tokens
//   turn.failed               → failure (error.message)
//   error                     → failure, unless a later turn completes (codex reports
//                               stream reconnects as `error` and then carries on)
//   item.completed agent_message → final message
// No cost is ever reported.
export function codexInterpreter(state: AgentState): LineInterpreter {
  let pendingError: string | undefined;
  /** The last usage snapshot per thread id (`''`: before any thread id was seen). */
  const snapshots = new Map<string, Usage>();
  let thread = '';

  const fail = (message: string): void => {
    state.isError = true;
    state.errorMessage = boundMessage(message);
    if (isProviderText(message)) marksProviderLimit(state, undefined);
    else marksSetupFailure(state, message, statusOf(message));
  };

  return {
    line(text) {
      const event = jsonEvent(state, text);
      if (event === undefined) return;
      switch (event['type']) {
        case 'thread.started':
          if (typeof event['thread_id'] === 'string') state.sessionId = thread = event['thread_id'];
          return;
        case 'session.created':
          if (typeof event['session_id'] === 'string') state.sessionId = thread = event['session_id'];
          return;
        case 'turn.completed': {
          const u = isRecord(event['usage']) ? event['usage'] : {};
          const cached = count(u['cached_input_tokens']);
          snapshots.set(thread, {
            inputTokens: Math.max(0, count(u['input_tokens']) - cached),
            cacheReadTokens: cached,
            outputTokens: count(u['output_tokens']),
            cacheCreationTokens: 0,
          });
          state.usage = [...snapshots.values()].reduce(addUsage, zeroUsage());
          if (thread !== '') state.threads = { ...state.threads, [thread]: snapshots.get(thread)! };
          if (pendingError !== undefined) warn(state, `recovered from: ${pendingError.slice(0, 200)}`);
          pendingError = undefined;
          state.sawResult = true;
          state.terminal = true;
          return;
        }
        case 'turn.failed': {
          const error = isRecord(event['error']) ? event['error'] : {};
          fail(typeof error['message'] === 'string' ? error['message'] : 'turn failed');
          state.sawResult = true;
          state.terminal = true;
          return;
        }
        case 'error':
          pendingError = typeof event['message'] === 'string' ? event['message'] : 'error';
          return;
        case 'item.completed': {
          const item = isRecord(event['item']) ? event['item'] : {};
          const kind = item['type'] ?? item['item_type'];
          if ((kind === 'agent_message' || kind === 'assistant_message') && typeof item['text'] === 'string') {
            scanBlocked(state, item['text']);
            state.finalMessage = boundMessage(item['text']);
          }
          return;
        }
        default:
          return;
      }
    },
    end() {
      if (pendingError !== undefined && !state.isError) fail(pendingError);
    },
  };
}

// The HTTP status inside a codex error message (`{"type":"error","status":400,…}` or `401 Unauthorized`).
function statusOf(message: string): number | undefined {
  const json = /"status"\s*:\s*(\d{3})/.exec(message);
  if (json) return Number(json[1]);
  const bare = /\b(4\d\d) (?:Unauthorized|Forbidden|Not Found|Bad Request)\b/i.exec(message);
  return bare ? Number(bare[1]) : undefined;
}
