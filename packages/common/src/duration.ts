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
