const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

// Parses the one duration syntax every tool accepts: `500ms`, `30s`, `10m`, `2h` (also
// `1.5s`), and a bare `0`. Returns milliseconds, or undefined for anything else (including
// any other bare number). A positive duration under 1 ms rounds up to 1 ms, never down to
// a zero that would read as "none"; any length is accepted (timers chain, see timer.ts).
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(trimmed);
  if (!match) return undefined;
  const ms = Number(match[1]) * units[match[2]!]!;
  if (!Number.isFinite(ms)) return undefined;
  return ms > 0 && ms < 1 ? 1 : Math.round(ms);
}

// The shortest exact spelling of a duration in the same syntax (`90000` → `90s`).
export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** The longest wait a command-line duration names: larger ones (GNU's `1e60d`) saturate here, ~285,000 years. */
export const maxDurationMs = Number.MAX_SAFE_INTEGER;

const commandLineUnits: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

// The wider syntax settle's and run-hook's command lines accept, as GNU `timeout` does:
// everything parseDuration reads, plus a bare number as seconds (`10`, `1.5`, `2.34e+5`) and
// the `d` unit (`2d`). Too large to count saturates at maxDurationMs; a positive value too
// small to count rounds up to 1 ms; negative, `NaN`, `42D` are undefined. Plans and the other
// tools keep parseDuration.
export function parseCommandLineDuration(text: string): number | undefined {
  const strict = parseDuration(text);
  if (strict !== undefined) return strict;
  const match = /^(\d+(?:\.\d*)?|\.\d+)((?:[eE][+-]?\d+)?)(s|m|h|d)?$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]! + match[2]!) * commandLineUnits[match[3] ?? 's']!;
  if (Number.isNaN(ms)) return undefined;
  if (ms >= maxDurationMs) return maxDurationMs;
  if (ms === 0) return /[1-9]/.test(match[1]!) ? 1 : 0;
  return ms < 1 ? 1 : Math.round(ms);
}
