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
} from './state.js';
import type { AgentState, LineInterpreter } from './state.js';

// `codex exec --json`: one thread event per line.
//   thread.started            → session id (thread_id)
//   turn.completed.usage      → summed over turns; codex's input_tokens INCLUDES the cached
//                               ones, so input = input_tokens - cached_input_tokens and
//                               cacheRead = cached_input_tokens (no token counted twice)
//   turn.failed               → failure (error.message)
//   error                     → failure, unless a later turn completes (codex reports
//                               stream reconnects as `error` and then carries on)
//   item.completed agent_message → final message
// No cost is ever reported.
export function codexInterpreter(state: AgentState): LineInterpreter {
  let pendingError: string | undefined;

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
          if (typeof event['thread_id'] === 'string') state.sessionId = event['thread_id'];
          return;
        case 'turn.completed': {
          const u = isRecord(event['usage']) ? event['usage'] : {};
          const cached = count(u['cached_input_tokens']);
          state.usage = addUsage(state.usage, {
            inputTokens: Math.max(0, count(u['input_tokens']) - cached),
            cacheReadTokens: cached,
            outputTokens: count(u['output_tokens']),
            cacheCreationTokens: 0,
          });
          if (pendingError !== undefined) warn(state, `recovered from: ${pendingError.slice(0, 200)}`);
          pendingError = undefined;
          state.terminal = true;
          return;
        }
        case 'turn.failed': {
          const error = isRecord(event['error']) ? event['error'] : {};
          fail(typeof error['message'] === 'string' ? error['message'] : 'turn failed');
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
