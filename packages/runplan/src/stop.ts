import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '@runplan/settle';
import { readJournal, type JournalRecord, type LockHolder } from '@runplan/journal';
import { listRunIds, runPaths, slugPaths } from './state.js';
import { liveCoordinator } from './status.js';

export type StopEnd =
  | { kind: 'not_running'; slug: string }
  | { kind: 'still_running'; holder: LockHolder; waitedMs: number }
  | { kind: 'stopped'; holder: LockHolder; receipt: JournalRecord | undefined; journal: string | undefined };

// `runplan stop`: SIGTERM to the slug's live coordinator, verified by pid AND start time
// (a reused pid is never signalled), then wait for it to exit and read the receipt it wrote.
export async function stopSlug(stateRoot: string, slug: string, waitMs: number): Promise<StopEnd> {
  const paths = slugPaths(stateRoot, slug);
  const holder = await liveCoordinator(paths);
  if (holder === undefined) return { kind: 'not_running', slug };
  const identity = { pid: holder.pid, startTime: holder.startTime, bootId: holder.bootId, host: holder.host };
  try {
    process.kill(holder.pid, 'SIGTERM');
  } catch {
    return { kind: 'not_running', slug };
  }
  const started = Date.now();
  // Waiting on another process's exit: /proc is the only event there is, so look every 100ms.
  while (isAlive(identity)) {
    if (Date.now() - started >= waitMs) return { kind: 'still_running', holder, waitedMs: Date.now() - started };
    await sleep(100);
  }
  // The receipt it wrote: the newest terminal record among the slug's runs (a resumed run
  // keeps its older id, so the lock's run id is only a hint).
  let best: { receipt: JournalRecord; journal: string } | undefined;
  for (const id of await listRunIds(paths)) {
    const journal = runPaths(paths, id).journal;
    try {
      const { records } = await readJournal(journal);
      const receipt = records.find((r) => r.terminal === true);
      if (receipt !== undefined && (best === undefined || receipt.ts >= best.receipt.ts)) best = { receipt, journal };
    } catch {
      // A corrupt journal holds no receipt we could print.
    }
  }
  return { kind: 'stopped', holder, receipt: best?.receipt, journal: best?.journal };
}
