import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentFormat } from '../plan/types.js';
import type { UsageData } from '../events/types.js';
import { interpretTranscript, totalTokens } from '../agent/consumer.js';
import type { OpenAttempt } from '../events/view.js';

// Usage an interrupted agent reported before its coordinator died, recounted from the
// transcript saved as it streamed: the `usage` record to journal, or undefined when the
// attempt's usage is already counted (it reached command-settled), its format is unknown,
// or the transcript is missing or reports nothing. Used by a resume and by `runplan stop`
// after a crash, so a crash never loses spend from the slug's budget.
export async function recountedUsage(a: OpenAttempt, format: AgentFormat | undefined): Promise<UsageData | undefined> {
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
  return {
    taskId: a.taskId,
    attempt: a.attempt,
    usage: { ...state.usage },
    costUsd: state.costUsd ?? null,
    source: 'transcript',
    transcript,
  };
}
