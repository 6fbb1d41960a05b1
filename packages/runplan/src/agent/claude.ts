import {
  addUsage,
  boundMessage,
  count,
  isProviderText,
  isRecord,
  jsonEvent,
  marksProviderLimit,
  marksSetupFailure,
  maxUsage,
  resetFromText,
  scanBlocked,
  warn,
  zeroUsage,
} from './state.js';
import type { AgentState, LineInterpreter, Usage } from './state.js';

// `claude -p --output-format stream-json --verbose`: one JSON object per line.
//   system/init   → session id
//   assistant     → message.usage per message id (verbose repeats a message once per
//                   content block, so usage is kept per id, never summed per line)
//   rate_limit_event with status `rejected` → provider limited (resetsAt, epoch seconds)
//   result        → total_cost_usd; tokens: modelUsage summed (else usage), per field at least the assistant sum,
//                   is_error / subtype, the final text
// Assistant usage stands in when no result line arrived (a killed or broken agent), and per
// field when the result's is smaller (a terminal line that zeroes usage out).
export function claudeInterpreter(state: AgentState): LineInterpreter {
  const byMessage = new Map<string, Usage>();
  let anonymous = 0;
  let lastAssistantText: string | undefined;

  const assistantUsage = (): Usage => {
    let sum = zeroUsage();
    for (const u of byMessage.values()) sum = addUsage(sum, u);
    return sum;
  };

  const onAssistant = (event: Record<string, unknown>): void => {
    const message = isRecord(event['message']) ? event['message'] : undefined;
    if (!message) return;
    if (isRecord(message['usage'])) {
      const id = typeof message['id'] === 'string' ? message['id'] : `#${anonymous++}`;
      byMessage.set(id, usageFromSnake(message['usage']));
    }
    const text = textOf(message['content']);
    if (text !== '') {
      scanBlocked(state, text);
      lastAssistantText = text;
    }
    // A synthetic assistant message carries the API failure (`"error": "rate_limit"`).
    const error = event['error'];
    if (typeof error === 'string' && (PROVIDER_ERRORS.has(error) || isProviderText(`${error} ${text}`))) {
      marksProviderLimit(state, resetFromText(text));
    }
    if (!state.sawResult) {
      state.usage = assistantUsage();
      if (lastAssistantText !== undefined) state.finalMessage = boundMessage(lastAssistantText);
    }
  };

  const onResult = (event: Record<string, unknown>): void => {
    if (state.sawResult) warn(state, 'more than one result line; the last one counts');
    state.sawResult = true;
    if (typeof event['session_id'] === 'string') state.sessionId = event['session_id'];
    if (typeof event['total_cost_usd'] === 'number') state.costUsd = event['total_cost_usd'];
    const models = isRecord(event['modelUsage']) ? Object.values(event['modelUsage']).filter(isRecord) : [];
    // Per field the larger of the result's and the assistant lines' (deduplicated) sum: an
    // aborted or error_during_execution result can carry all-zero usage after real spend.
    if (models.length > 0) state.usage = maxUsage(models.map(usageFromCamel).reduce(addUsage, zeroUsage()), assistantUsage());
    else if (isRecord(event['usage'])) state.usage = maxUsage(usageFromSnake(event['usage']), assistantUsage());
    else state.usage = assistantUsage();
    const text = typeof event['result'] === 'string' ? event['result'] : undefined;
    if (text !== undefined) {
      scanBlocked(state, text);
      state.finalMessage = boundMessage(text);
    }
    const subtype = typeof event['subtype'] === 'string' ? event['subtype'] : undefined;
    const status = typeof event['api_error_status'] === 'number' ? event['api_error_status'] : undefined;
    if (event['is_error'] === true || (subtype !== undefined && subtype !== 'success')) {
      state.isError = true;
      state.errorMessage = boundMessage(resultMessage({ event, subtype, status, text }));
      // 429 (rate limit) and 529 (overloaded) are refusals even without a rate_limit_event
      // (API-key auth, CLIs before 2.1.45) and with an empty `result` (the SDK's test shape).
      // A machine-readable reset (rate_limit_event.resetsAt) is not overridden by the prose's.
      if (status === 429 || status === 529 || isProviderText(state.errorMessage)) {
        marksProviderLimit(state, state.resetAtMs === undefined ? resetFromText(state.errorMessage) : undefined);
      } else if (subtype === 'success' || subtype === undefined) {
        // An API failure (not a CLI-raised error subtype, whose errors[] are the task's own).
        marksSetupFailure(state, state.errorMessage, status);
      }
    }
  };

  const onRateLimit = (event: Record<string, unknown>): void => {
    const info = isRecord(event['rate_limit_info']) ? event['rate_limit_info'] : {};
    // `allowed` and `allowed_warning` are informational; only a rejection stops the agent.
    if (info['status'] !== 'rejected') return;
    const resetsAt = typeof info['resetsAt'] === 'number' ? info['resetsAt'] * 1000 : undefined;
    marksProviderLimit(state, resetsAt);
    warn(state, `rate limit rejected${info['rateLimitType'] ? ` (${String(info['rateLimitType'])})` : ''}`);
  };

  return {
    line(text) {
      const event = jsonEvent(state, text);
      if (event === undefined) return;
      switch (event['type']) {
        case 'system':
          if (event['subtype'] === 'init' && typeof event['session_id'] === 'string') state.sessionId ??= event['session_id'];
          return;
        case 'assistant':
          onAssistant(event);
          return;
        case 'result':
          onResult(event);
          state.terminal = true;
          return;
        case 'rate_limit_event':
          onRateLimit(event);
          return;
        default:
          return;
      }
    },
    end() {
      if (!state.sawResult && state.lines > 0) warn(state, 'no result line: usage recovered from assistant messages');
    },
  };
}

/** The assistant `error` values of a provider refusal (claude-agent-sdk's AssistantMessageError). */
const PROVIDER_ERRORS = new Set(['rate_limit', 'overloaded']);

// What a failed result says, in the order that says most: `errors[]` (CLI-raised errors),
// the `result` text (API failures), a non-success subtype, the HTTP status — never "success".
function resultMessage(r: { event: Record<string, unknown>; subtype?: string; status?: number; text?: string }): string {
  const errors = Array.isArray(r.event['errors']) ? r.event['errors'].filter((e) => typeof e === 'string' && e !== '').join('; ') : '';
  const named = r.subtype !== undefined && r.subtype !== 'success' ? r.subtype : undefined;
  const prose = errors !== '' ? errors : r.text !== undefined && r.text.trim() !== '' ? r.text : undefined;
  const http = r.status !== undefined ? `API error (HTTP ${r.status})` : undefined;
  if (prose !== undefined) return named !== undefined ? `${named}: ${prose}` : prose;
  return named ?? http ?? 'the agent reported an error (is_error) and said nothing more';
}

function usageFromSnake(u: Record<string, unknown>): Usage {
  return {
    inputTokens: count(u['input_tokens']),
    outputTokens: count(u['output_tokens']),
    cacheReadTokens: count(u['cache_read_input_tokens']),
    cacheCreationTokens: count(u['cache_creation_input_tokens']),
  };
}

function usageFromCamel(u: Record<string, unknown>): Usage {
  return {
    inputTokens: count(u['inputTokens']),
    outputTokens: count(u['outputTokens']),
    cacheReadTokens: count(u['cacheReadInputTokens']),
    cacheCreationTokens: count(u['cacheCreationInputTokens']),
  };
}

// The text blocks of a message's content (a string, or blocks of `{type: "text", text}`).
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b): b is Record<string, unknown> => isRecord(b) && b['type'] === 'text' && typeof b['text'] === 'string')
    .map((b) => b['text'] as string)
    .join('\n');
}
