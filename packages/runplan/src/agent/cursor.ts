import { boundMessage, isRecord, jsonEvent, scanBlocked } from './state.js';
import type { AgentState, LineInterpreter } from './state.js';

// Cursor CLI `agent -p --output-format stream-json` (legacy `cursor-agent`): one event per line.
//   system/init               → session id
//   assistant                 → message.content text blocks (the last is the final text)
//   result                    → terminal: subtype success | error, is_error, result text
// It reports no tokens and no cost, so a plan budgeting either is refused at validate.
export function cursorInterpreter(state: AgentState): LineInterpreter {
  return {
    line(line) {
      const event = jsonEvent(state, line);
      if (event === undefined) return;
      if (typeof event['session_id'] === 'string') state.sessionId ??= event['session_id'];
      switch (event['type']) {
        case 'assistant': {
          const message = isRecord(event['message']) ? event['message'] : {};
          const content = Array.isArray(message['content']) ? message['content'] : [];
          const text = content
            .filter((b): b is Record<string, unknown> => isRecord(b) && b['type'] === 'text' && typeof b['text'] === 'string')
            .map((b) => b['text'] as string)
            .join('\n');
          if (text !== '') {
            scanBlocked(state, text);
            state.finalMessage = boundMessage(text);
          }
          return;
        }
        case 'result': {
          state.sawResult = true;
          state.terminal = true;
          const text = typeof event['result'] === 'string' ? event['result'] : undefined;
          if (text !== undefined && text !== '') {
            scanBlocked(state, text);
            state.finalMessage = boundMessage(text);
          }
          if (event['is_error'] === true || (typeof event['subtype'] === 'string' && event['subtype'] !== 'success')) {
            state.isError = true;
            state.errorMessage = boundMessage(text && text !== '' ? text : String(event['subtype'] ?? 'is_error'));
          }
          return;
        }
        default:
          return;
      }
    },
    end() {},
  };
}
