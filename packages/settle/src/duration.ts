const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

// Parses the one duration syntax every tool accepts: `500ms`, `30s`, `10m`, `2h` (also
// `1.5s`). Returns milliseconds, or undefined for anything else (including a bare number).
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * units[match[2]!]!;
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

// The shortest exact spelling of a duration in the same syntax (`90000` → `90s`).
export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
