import { ZERO_USAGE, type UsageTotals } from './usage.js';

// Codex reports usage as each thread's running total. An attempt (or a continuation, or a
// loop round) that resumes a thread an earlier command already counted must add only what
// the thread spent since: the last total seen per thread is journaled with the command's
// usage (command-settled / usage `threads`) and subtracted from the next report of it.

/** The last running total an agent reported for one thread (codex `thread_id`). */
export interface ThreadTotal {
  threadId: string;
  lastTotal: UsageTotals;
}

const FIELDS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheCreationTokens'] as const;

// What a command spent: its reported usage less what earlier commands already counted of
// the threads it names. A field whose running total went down started over: all of it is new.
export function uncountedUsage(
  reported: UsageTotals,
  threads: readonly ThreadTotal[],
  known: ReadonlyMap<string, UsageTotals>,
): UsageTotals {
  const out = { ...reported };
  for (const { threadId, lastTotal } of threads) {
    const before = known.get(threadId);
    if (before === undefined) continue;
    for (const k of FIELDS) if (lastTotal[k] >= before[k]) out[k] = Math.max(0, out[k] - before[k]);
  }
  return out;
}

// The thread totals a journaled record carries (command-settled / usage `threads`), ignoring malformed entries.
export function threadTotalsOf(value: unknown): ThreadTotal[] {
  if (!Array.isArray(value)) return [];
  const out: ThreadTotal[] = [];
  for (const t of value) {
    if (t === null || typeof t !== 'object') continue;
    const { threadId, lastTotal } = t as { threadId?: unknown; lastTotal?: unknown };
    if (typeof threadId !== 'string' || lastTotal === null || typeof lastTotal !== 'object') continue;
    out.push({ threadId, lastTotal: { ...ZERO_USAGE, ...(lastTotal as Partial<UsageTotals>) } });
  }
  return out;
}
