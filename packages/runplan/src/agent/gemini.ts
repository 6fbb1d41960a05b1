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

// `gemini -p --output-format stream-json`: one event per line (gemini-cli
// StreamJsonFormatter).
//   init                      → session id (session_id)
//   message role assistant    → the final text (delta chunks concatenated)
//   error                     → a non-fatal warning, not terminal
//   result                    → terminal: status success | error (error.message); stats
//                               {total_tokens, input_tokens (prompt, cached ⊂ it), cached,
//                               input (prompt − cached), output_tokens}: input = input,
//                               cacheRead = cached, output = total − prompt (candidates,
//                               thoughts and tool tokens), so the four add up to total_tokens
// No cost is reported. Exit codes (41 auth, 42/44/52 configuration, 53 turn limit) are read by
// classifyCommand.
export function geminiStreamInterpreter(state: AgentState): LineInterpreter {
  let text = '';
  return {
    line(line) {
      const event = jsonEvent(state, line);
      if (event === undefined) return;
      switch (event['type']) {
        case 'init':
          if (typeof event['session_id'] === 'string') state.sessionId = event['session_id'];
          return;
        case 'message':
          if (event['role'] === 'assistant' && typeof event['content'] === 'string') {
            text = event['delta'] === true ? text + event['content'] : event['content'];
            scanBlocked(state, text);
            state.finalMessage = boundMessage(text);
          }
          return;
        case 'error':
          warn(state, `gemini: ${typeof event['message'] === 'string' ? event['message'].slice(0, 200) : 'error'}`);
          return;
        case 'result':
          state.sawResult = true;
          state.terminal = true;
          if (isRecord(event['stats'])) state.usage = streamUsage(event['stats']);
          if (event['status'] !== 'success') failed(state, event['error']);
          return;
        default:
          return;
      }
    },
    end() {},
  };
}

// `gemini -p --output-format json`: one (pretty-printed) object at the end: session_id,
// response, stats.models.<m>.tokens {prompt, cached (⊂ prompt), candidates, thoughts, tool,
// total}, error {type, message, code} when it failed.
export function geminiJsonInterpreter(state: AgentState): LineInterpreter {
  const lines: string[] = [];
  return {
    line(line) {
      lines.push(line);
      if (line.includes('RUNPLAN: BLOCKED')) scanBlocked(state, line);
    },
    end() {
      const body = lines.join('\n').trim();
      if (body === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.slice(body.indexOf('{')));
      } catch {
        warn(state, 'gemini-json: the output is not one JSON object');
        return;
      }
      if (!isRecord(parsed)) return;
      state.sawResult = true;
      if (typeof parsed['session_id'] === 'string') state.sessionId = parsed['session_id'];
      if (typeof parsed['response'] === 'string') {
        scanBlocked(state, parsed['response']);
        state.finalMessage = boundMessage(parsed['response']);
      }
      const stats = isRecord(parsed['stats']) ? parsed['stats'] : {};
      const models = isRecord(stats['models']) ? Object.values(stats['models']).filter(isRecord) : [];
      state.usage = models.map((m) => modelUsage(isRecord(m['tokens']) ? m['tokens'] : {})).reduce(addUsage, zeroUsage());
      if (parsed['error'] !== undefined && parsed['error'] !== null) failed(state, parsed['error']);
    },
  };
}

// A failed gemini run: its error's message; a quota or rate limit is a provider refusal.
function failed(state: AgentState, error: unknown): void {
  const e = isRecord(error) ? error : {};
  const message = typeof e['message'] === 'string' ? e['message'] : 'gemini reported an error';
  state.isError = true;
  state.errorMessage = boundMessage(message);
  const status = typeof e['code'] === 'number' ? e['code'] : undefined;
  if (status === 429 || isProviderText(message) || /RESOURCE_EXHAUSTED/.test(message)) marksProviderLimit(state, undefined);
  else marksSetupFailure(state, message, status);
}

// stream-json `result.stats`: the four add up to total_tokens.
function streamUsage(s: Record<string, unknown>): Usage {
  const prompt = count(s['input_tokens']);
  const cached = count(s['cached']);
  const input = s['input'] !== undefined ? count(s['input']) : Math.max(0, prompt - cached);
  const total = count(s['total_tokens']);
  return {
    inputTokens: input,
    cacheReadTokens: cached,
    outputTokens: total > 0 ? Math.max(0, total - prompt) : count(s['output_tokens']),
    cacheCreationTokens: 0,
  };
}

// json `stats.models.<m>.tokens`: prompt − cached in, cached read, the rest of total out.
function modelUsage(t: Record<string, unknown>): Usage {
  const prompt = count(t['prompt']);
  const cached = count(t['cached']);
  const total = count(t['total']);
  const output = total > 0 ? Math.max(0, total - prompt) : count(t['candidates']) + count(t['thoughts']) + count(t['tool']);
  return { inputTokens: Math.max(0, prompt - cached), cacheReadTokens: cached, outputTokens: output, cacheCreationTokens: 0 };
}
