import { stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '@runplan/settle';
import { acquireLock, type JournalRecord, type LockHolder } from '@runplan/journal';
import { readRun } from '../resume/inspect.js';
import { listRunIds, runPaths, slugPaths, type SlugPaths } from '../host/state.js';
import { stopAfterCrash, type CrashedRunStop, type StopOptions } from './after-crash.js';
import { isStopHolder, liveCoordinator, STOP_ROLE } from './status.js';

export type { CrashedRunStop, StopOptions };

/**
 * How `runplan stop` ended. A live coordinator is signalled (`stopped`, `still_running`);
 * with none, the slug's crashed runs are dealt with under the slug lock (`after_crash`).
 *
 *   live coordinator ── SIGTERM ──▶ stopped | still_running
 *                                └─▶ exited without a receipt: no_receipt, then as for none
 *   none ── slug lock ──▶ no incomplete run: not_running
 *                     └─▶ end leftovers ──▶ survivors: journal that, no receipt
 *                                       └─▶ leftovers-ended, attempt-closed, run-failed
 */
export type StopEnd =
  | { kind: 'not_running'; slug: string }
  | { kind: 'still_running'; holder: LockHolder; waitedMs: number }
  | { kind: 'stopped'; holder: LockHolder; receipt: JournalRecord; journal: string }
  /**
   * It exited without a receipt (its journal refused a write, or it was killed): its run was
   * then dealt with as after a crash (`after`: what that found and did).
   */
  | { kind: 'no_receipt'; holder: LockHolder; after: Exclude<StopEnd, { kind: 'stopped' | 'no_receipt' }> }
  /** Another `runplan stop` holds the slug, or a holder on another host that cannot be checked. */
  | { kind: 'locked'; slug: string; holder: LockHolder | undefined; message: string }
  /** The slug lock could not be taken (its identity file not written): nothing was touched. */
  | { kind: 'lock_failed'; slug: string; reason: string; message: string }
  | { kind: 'after_crash'; slug: string; runs: CrashedRunStop[] };

// `runplan stop`: SIGTERM to the slug's live coordinator, verified by pid AND start time
// (a reused pid is never signalled), then wait for it to exit and read the receipt it wrote.
// With no live coordinator, a crashed run's leftovers are ended and the run closed
// (stopAfterCrash), holding the slug lock so no `run` starts meanwhile.
export async function stopSlug(stateRoot: string, slug: string, waitMs: number, opts: StopOptions = {}): Promise<StopEnd> {
  const paths = slugPaths(stateRoot, slug);
  const holder = await liveCoordinator(paths);
  if (holder !== undefined) return isStopHolder(holder) ? lockedByStop(slug, holder) : signalCoordinator(paths, holder, waitMs, opts);
  return stopCrashed(paths, waitMs, opts);
}

// No live coordinator: the slug's crashed runs, under the slug lock.
async function stopCrashed(paths: SlugPaths, waitMs: number, opts: StopOptions): Promise<StopEnd> {
  const slug = paths.slug;
  // No state for the slug at all: nothing to stop, and nothing to take a lock in.
  if (!(await exists(paths.dir))) return { kind: 'not_running', slug };
  const lock = await acquireLock(paths.dir, { identityPath: paths.identity, details: { role: STOP_ROLE, slug } });
  if (!lock.ok) {
    const e = lock.error;
    if (e.reason === 'bad_path') return { kind: 'not_running', slug };
    if (e.reason === 'lock_held') {
      // A coordinator that started since we looked is stopped as usual.
      const now = await liveCoordinator(paths);
      if (now !== undefined && !isStopHolder(now)) return signalCoordinator(paths, now, waitMs, opts);
      return now !== undefined ? lockedByStop(slug, now) : { kind: 'locked', slug, holder: e.holder, message: e.message };
    }
    if (e.reason === 'foreign_host') return { kind: 'locked', slug, holder: undefined, message: e.message };
    return { kind: 'lock_failed', slug, reason: e.reason, message: e.message };
  }
  try {
    const runs = await stopAfterCrash(paths, opts);
    return runs.length === 0 ? { kind: 'not_running', slug } : { kind: 'after_crash', slug, runs };
  } finally {
    await lock.value.release();
  }
}

// Whether a path exists; an error other than ENOENT (EACCES …) says it may, and the lock tells.
async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

function lockedByStop(slug: string, holder: LockHolder): StopEnd {
  return {
    kind: 'locked',
    slug,
    holder,
    message: `slug ${slug} is being stopped by another runplan stop, pid ${holder.pid} (start time ${holder.startTime}, since ${holder.acquiredAt})`,
  };
}

async function signalCoordinator(paths: SlugPaths, holder: LockHolder, waitMs: number, opts: StopOptions): Promise<StopEnd> {
  const identity = { pid: holder.pid, startTime: holder.startTime, bootId: holder.bootId, host: holder.host };
  try {
    process.kill(holder.pid, 'SIGTERM');
  } catch {
    return { kind: 'not_running', slug: paths.slug };
  }
  const started = Date.now();
  // Waiting on another process's exit: /proc is the only event there is, so look every 100ms.
  while (isAlive(identity)) {
    if (Date.now() - started >= waitMs) return { kind: 'still_running', holder, waitedMs: Date.now() - started };
    await sleep(100);
  }
  // The receipt it wrote: the newest terminal record among the slug's runs written since it
  // took the lock (a resumed run keeps its older id, so the lock's run id is only a hint; an
  // earlier run's receipt is older than the lock and never passes for this one's).
  let best: { receipt: JournalRecord; journal: string } | undefined;
  for (const id of await listRunIds(paths)) {
    const journal = runPaths(paths, id).journal;
    // An unreadable journal holds no receipt we could print (its view is empty).
    const receipt = (await readRun(journal)).view.terminal;
    if (receipt !== undefined && receipt.ts >= holder.acquiredAt && (best === undefined || receipt.ts >= best.receipt.ts))
      best = { receipt, journal };
  }
  if (best !== undefined) return { kind: 'stopped', holder, ...best };
  // None: what it left (agents still running, a run with no receipt) is dealt with as after a crash.
  const after = await stopCrashed(paths, waitMs, opts);
  return after.kind === 'stopped' || after.kind === 'no_receipt' ? after : { kind: 'no_receipt', holder, after };
}
