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
  /**
   * The agent cannot work as configured: `auth` (not logged in, 401), `config` (an unknown or
   * unavailable model: claude 404, codex 400). Class environment, never retried.
   */
  setupFailure?: 'auth' | 'config';
  /** When the provider said the limit resets (epoch ms), if it said. */
  resetAtMs?: number;
  /** Reason from a `RUNPLAN: BLOCKED <reason>` line: class `needs_human`. */
  blocked?: string;
  warnings: string[];
  /** Lines seen (complete or final partial). */
  lines: number;
  /** codex: the last running total per thread id the stream named (the caller subtracts what it already counted). */
  threads?: Record<string, Usage>;
  /**
   * A terminal line arrived (claude, gemini and cursor `result`, codex `turn.completed` /
   * `turn.failed`, gemini-json's one object): claude's usage is then authoritative, and a JSON
   * stream without one was cut off (`no_result`).
   */
  sawResult: boolean;
  /** The line just interpreted was terminal (claude `result`, codex `turn.completed` / `turn.failed`). */
  terminal?: boolean;
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

// Per field the larger of two counts of the same spend.
export function maxUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: Math.max(a.inputTokens, b.inputTokens),
    outputTokens: Math.max(a.outputTokens, b.outputTokens),
    cacheReadTokens: Math.max(a.cacheReadTokens, b.cacheReadTokens),
    cacheCreationTokens: Math.max(a.cacheCreationTokens, b.cacheCreationTokens),
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

const PROVIDER_TEXT =
  /rate[ _-]?limit|overloaded|usage limit|too many requests|\b429\b|\b529\b|quota exceeded|insufficient_quota|hit your (?:\w+ )?limit/i;

// Whether an error text (never ordinary agent prose) names a rate limit or overload.
export function isProviderText(text: string): boolean {
  return PROVIDER_TEXT.test(text);
}

// When a limit text says the limit resets (epoch ms): claude's `Claude AI usage limit
// reached|1761606000` (epoch seconds), or `resets 7pm (UTC)` / `resets 19:30 (Europe/Paris)`,
// a time of day without a date: its next occurrence after `nowMs`.
export function resetFromText(text: string, nowMs = Date.now()): number | undefined {
  const match = /limit reached\|(\d{9,11})\b/i.exec(text);
  if (match) return Number(match[1]) * 1000;
  return resetAtTimeOfDay(text, nowMs);
}

const RESETS_AT = /\bresets(?: at)? (\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s*\(([^)]+)\))?/i;

// `resets 7pm (UTC)`: the next such time after now, in the named zone (UTC when none is named).
function resetAtTimeOfDay(text: string, nowMs: number): number | undefined {
  const m = RESETS_AT.exec(text);
  if (!m) return undefined;
  let hour = Number(m[1]);
  const minute = m[2] !== undefined ? Number(m[2]) : 0;
  const half = m[3]?.toLowerCase();
  if (half !== undefined && (hour < 1 || hour > 12)) return undefined;
  if (half === 'pm' && hour !== 12) hour += 12;
  if (half === 'am' && hour === 12) hour = 0;
  if (hour > 23 || minute > 59) return undefined;
  const offset = zoneOffsetMs(m[4]?.trim() ?? 'UTC', nowMs);
  if (offset === undefined) return undefined;
  const local = new Date(nowMs + offset);
  let at = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), hour, minute) - offset;
  if (at <= nowMs) at += 24 * 3600 * 1000;
  return at;
}

// How far a time zone is ahead of UTC at `atMs` (undefined: not a zone Intl knows).
function zoneOffsetMs(zone: string, atMs: number): number | undefined {
  if (/^(?:UTC|GMT|Z)$/i.test(zone)) return 0;
  try {
    const parts = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    }).formatToParts(new Date(atMs));
    const n = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
    const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
    return asUtc - Math.floor(atMs / 1000) * 1000;
  } catch {
    return undefined;
  }
}

const AUTH_TEXT = /not logged in|please run \/login|invalid api key|authentication_error|\b401\b/i;

// Marks an auth or configuration failure an API error's status and text show (no-op otherwise):
// 401/403 or the login wording → auth; 404 (claude: no such model), 400 naming a model → config.
export function marksSetupFailure(state: AgentState, text: string, status?: number): void {
  if (status === 401 || status === 403 || AUTH_TEXT.test(text)) state.setupFailure = 'auth';
  else if (status === 404 || (status === 400 && /model/i.test(text))) state.setupFailure = 'config';
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
