import { readFile } from 'node:fs/promises';
import type { AgentFormat } from '../plan/types.js';
import { uncountedUsage, type UsageData, type UsageTotals } from '../events/types.js';
import { interpretTranscript, totalTokens } from '../agent/consumer.js';
import type { OpenAttempt } from '../events/view.js';
import { roundTranscripts, transcriptPath } from '../host/evidence-names.js';

// Usage an interrupted agent reported before its coordinator died, recounted from the
// transcript saved as it streamed: the `usage` records to journal — none when the attempt's
// usage is already counted (its command reached command-settled), its format is unknown, or
// the transcript is missing or reports nothing. In a loop, each round's command has its own
// transcript and command-settled: a round without one (the round the crash interrupted) is
// recounted. Used by a resume and by `runplan stop` after a crash, so a crash never loses
// spend from the slug's budget. `known`: the last running total of each agent thread already
// counted (codex), updated with these.
export async function recountedUsage(
  a: OpenAttempt,
  format: AgentFormat | undefined,
  known: Map<string, UsageTotals> = new Map(),
): Promise<UsageData[]> {
  if (format === undefined) return [];
  const recounts: UsageData[] = [];
  for (const t of await uncountedTranscripts(a, format)) {
    const recount = await recountOne(a, { format, ...t }, known);
    if (recount !== undefined) recounts.push(recount);
  }
  return recounts;
}

// The transcripts of an attempt whose command has no command-settled.
async function uncountedTranscripts(a: OpenAttempt, format: AgentFormat): Promise<{ path: string; round?: number }[]> {
  const rounds = await roundTranscripts(a.evidenceDir, format);
  if (rounds.length === 0) return a.settled ? [] : [{ path: transcriptPath(a.evidenceDir, format) }];
  // A loop attempt whose command-settled records name no round was journaled before they did:
  // which round settled is unknown, so nothing is recounted (as then).
  if (a.settled) return [];
  return rounds.filter((r) => !a.settledRounds.includes(r.round));
}

async function recountOne(
  a: OpenAttempt,
  t: { format: AgentFormat; path: string; round?: number },
  known: Map<string, UsageTotals>,
): Promise<UsageData | undefined> {
  let text: string;
  try {
    text = await readFile(t.path, 'utf8');
  } catch {
    return undefined;
  }
  const state = interpretTranscript(t.format, text);
  if (totalTokens(state.usage) === 0 && state.costUsd === undefined) return undefined;
  const threads = Object.entries(state.threads ?? {}).map(([threadId, lastTotal]) => ({ threadId, lastTotal: { ...lastTotal } }));
  const usage = uncountedUsage({ ...state.usage }, threads, known);
  for (const th of threads) known.set(th.threadId, th.lastTotal);
  return {
    taskId: a.taskId,
    attempt: a.attempt,
    usage,
    ...(threads.length > 0 ? { threads } : {}),
    costUsd: state.costUsd ?? null,
    source: 'transcript',
    transcript: t.path,
    ...(t.round !== undefined ? { round: t.round } : {}),
  };
}
