import { isPlainObject, utf8Tail } from '@runplan/common';
import type { AgentFormat } from '../plan/types.js';

/** Tokens as the providers count them; budgets count all four. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

/**
 * What an attempt's stdout told us, accumulated line by line. It survives a transport
 * failure (settle.stream hands it back), so usage read before an EPIPE still counts.
 */
export interface AgentState {
  format: AgentFormat;
  sessionId?: string;
  usage: Usage;
  /** Reported by the agent (claude `total_cost_usd`); codex and text report none. */
  costUsd?: number;
  /** The agent's last word, bounded to FINAL_MESSAGE_BYTES (the tail is kept). */
  finalMessage?: string;
  /** The agent said it failed (`is_error`, an error subtype, `turn.failed`), whatever its exit code. */
  isError: boolean;
  errorMessage?: string;
  /** A rate limit or overload was reported: class `provider`, backed off rather than blamed. */
  providerLimited: boolean;
  /** When the provider said the limit resets (epoch ms), if it said. */
  resetAtMs?: number;
  /** Reason from a `RUNPLAN: BLOCKED <reason>` line: class `needs_human`. */
  blocked?: string;
  warnings: string[];
  /** Lines seen (complete or final partial). */
  lines: number;
  /** claude: a `result` line arrived, so its usage is authoritative. */
  sawResult: boolean;
}

export const FINAL_MESSAGE_BYTES = 8 * 1024;
const MAX_WARNINGS = 20;

export function initialAgentState(format: AgentFormat): AgentState {
  return { format, usage: zeroUsage(), isError: false, providerLimited: false, warnings: [], lines: 0, sawResult: false };
}

export function zeroUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
  };
}

// Tokens counted against a budget: input + cache creation + cache read + output.
export function totalTokens(u: Usage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;
}

// A warning is evidence for people; a flood of them (one per garbage line) is not.
export function warn(state: AgentState, message: string): void {
  if (state.warnings.length < MAX_WARNINGS) state.warnings.push(message);
  else if (state.warnings.length === MAX_WARNINGS) state.warnings.push('further warnings dropped');
}

// Keeps the last FINAL_MESSAGE_BYTES of a message without splitting a UTF-8 character.
export function boundMessage(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= FINAL_MESSAGE_BYTES ? text : '…' + utf8Tail(bytes, FINAL_MESSAGE_BYTES);
}

const BLOCKED_LINE = /^[ \t]*RUNPLAN: BLOCKED(?:[ \t]+(.*?))?[ \t]*\r?$/m;

// Sets `blocked` from the first `RUNPLAN: BLOCKED <reason>` line of text the agent wrote.
export function scanBlocked(state: AgentState, text: string): void {
  if (state.blocked !== undefined || !text.includes('RUNPLAN: BLOCKED')) return;
  const match = BLOCKED_LINE.exec(text);
  if (!match) return;
  const reason = (match[1] ?? '').trim();
  state.blocked = reason === '' ? 'no reason given' : reason.slice(0, 500);
}

const PROVIDER_TEXT = /rate[ _-]?limit|overloaded|usage limit|too many requests|\b429\b|\b529\b|quota exceeded|insufficient_quota/i;

// Whether an error text (never ordinary agent prose) names a rate limit or overload.
export function isProviderText(text: string): boolean {
  return PROVIDER_TEXT.test(text);
}

// claude prints `Claude AI usage limit reached|1761606000` (epoch seconds of the reset).
export function resetFromText(text: string): number | undefined {
  const match = /limit reached\|(\d{9,11})\b/i.exec(text);
  return match ? Number(match[1]) * 1000 : undefined;
}

export function marksProviderLimit(state: AgentState, resetAtMs: number | undefined): void {
  state.providerLimited = true;
  if (resetAtMs !== undefined && Number.isFinite(resetAtMs)) state.resetAtMs = Math.max(state.resetAtMs ?? 0, resetAtMs);
}

// Plain-object guard for parsed JSON.
// One line of a JSON agent format as an object; blank lines are nothing, and a line that is
// not JSON (a wrapper's plain output, a torn line) is a warning and still scanned for BLOCKED.
export function jsonEvent(state: AgentState, text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let event: unknown;
  try {
    event = JSON.parse(trimmed);
  } catch {
    scanBlocked(state, text);
    warn(state, `line ${state.lines} is not JSON: ${trimmed.slice(0, 80)}`);
    return undefined;
  }
  return isRecord(event) ? event : undefined;
}

// A JSON object as the agent's JSON lines hold them (@runplan/common's guard).
export const isRecord = isPlainObject;

export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Interprets one format's lines into a state; `end` runs once after the last line. */
export interface LineInterpreter {
  line(text: string): void;
  end(): void;
}
