import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentFormat } from '../plan/types.js';
import { uncountedUsage, type UsageData, type UsageTotals } from '../events/types.js';
import { interpretTranscript, totalTokens } from '../agent/consumer.js';
import type { OpenAttempt } from '../events/view.js';

// Usage an interrupted agent reported before its coordinator died, recounted from the
// transcript saved as it streamed: the `usage` record to journal, or undefined when the
// attempt's usage is already counted (it reached command-settled), its format is unknown,
// or the transcript is missing or reports nothing. Used by a resume and by `runplan stop`
// after a crash, so a crash never loses spend from the slug's budget. `known`: the last
// running total of each agent thread already counted (codex), updated with this one's.
export async function recountedUsage(
  a: OpenAttempt,
  format: AgentFormat | undefined,
  known: Map<string, UsageTotals> = new Map(),
): Promise<UsageData | undefined> {
  if (a.settled || format === undefined) return undefined;
  const transcript = join(a.evidenceDir, format === 'text' ? 'transcript.txt' : 'transcript.jsonl');
  let text: string;
  try {
    text = await readFile(transcript, 'utf8');
  } catch {
    return undefined;
  }
  const state = interpretTranscript(format, text);
  if (totalTokens(state.usage) === 0 && state.costUsd === undefined) return undefined;
  const threads = Object.entries(state.threads ?? {}).map(([threadId, lastTotal]) => ({ threadId, lastTotal: { ...lastTotal } }));
  const usage = uncountedUsage({ ...state.usage }, threads, known);
  for (const t of threads) known.set(t.threadId, t.lastTotal);
  return {
    taskId: a.taskId,
    attempt: a.attempt,
    usage,
    ...(threads.length > 0 ? { threads } : {}),
    costUsd: state.costUsd ?? null,
    source: 'transcript',
    transcript,
  };
}
