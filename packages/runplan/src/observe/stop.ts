import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, processIdentity, type ProcessIdentity, type ProcSource, type TeardownReport } from '@runplan/settle';
import { acquireLock, openWriter, type JournalRecord, type JournalWriter, type LockHolder } from '@runplan/journal';
import type { AgentFormat } from '../plan/types.js';
import {
  addUsage,
  shownCost,
  type AttemptClosedData,
  type LeftoversEndedData,
  type RunFailedData,
  type UsageData,
} from '../events/types.js';
import { endLeftovers, runTagPrefix } from '../resume/leftovers.js';
import { recountedUsage } from '../resume/recount.js';
import { inspectRuns, readRun, type PriorRun } from '../resume/inspect.js';
import { listRunIds, runPaths, slugPaths, type SlugPaths } from '../host/state.js';
import { isStopHolder, liveCoordinator, STOP_ROLE } from './status.js';

/** What `stop` did with one run whose coordinator had died. */
export interface CrashedRunStop {
  runId: string;
  journal: string;
  /** Pids signalled (each verified by pid + start time just before). */
  ended: number[];
  /** Pids still alive after SIGKILL: the run is left incomplete. */
  survivors: number[];
  /** The `run-failed` receipt written (class interrupted, reason stopped_after_crash). */
  receipt: JournalRecord | undefined;
  /** Why nothing (or not everything) could be journaled: the leftovers were ended all the same. */
  error: { reason: string; message: string } | undefined;
}

/**
 * How `runplan stop` ended. A live coordinator is signalled (`stopped`, `still_running`);
 * with none, the slug's crashed runs are dealt with under the slug lock (`after_crash`).
 *
 *   live coordinator ── SIGTERM ──▶ stopped | still_running
 *   none ── slug lock ──▶ no incomplete run: not_running
 *                     └─▶ end leftovers ──▶ survivors: journal that, no receipt
 *                                       └─▶ leftovers-ended, attempt-closed, run-failed
 */
export type StopEnd =
  | { kind: 'not_running'; slug: string }
  | { kind: 'still_running'; holder: LockHolder; waitedMs: number }
  | { kind: 'stopped'; holder: LockHolder; receipt: JournalRecord | undefined; journal: string | undefined }
  /** Another `runplan stop` holds the slug, or a holder on another host that cannot be checked. */
  | { kind: 'locked'; slug: string; holder: LockHolder | undefined; message: string }
  /** The slug lock could not be taken (its identity file not written): nothing was touched. */
  | { kind: 'lock_failed'; slug: string; reason: string; message: string }
  | { kind: 'after_crash'; slug: string; runs: CrashedRunStop[] };

export interface StopOptions {
  /** After a crash: how long the leftovers get after SIGTERM before SIGKILL. Default 5000. */
  graceMs?: number;
  /** Injected /proc reader for ending leftovers (tests). */
  proc?: Partial<ProcSource>;
}

// `runplan stop`: SIGTERM to the slug's live coordinator, verified by pid AND start time
// (a reused pid is never signalled), then wait for it to exit and read the receipt it wrote.
// With no live coordinator, a crashed run's leftovers are ended and the run closed
// (stopAfterCrash), holding the slug lock so no `run` starts meanwhile.
export async function stopSlug(stateRoot: string, slug: string, waitMs: number, opts: StopOptions = {}): Promise<StopEnd> {
  const paths = slugPaths(stateRoot, slug);
  const holder = await liveCoordinator(paths);
  if (holder !== undefined) return isStopHolder(holder) ? lockedByStop(slug, holder) : signalCoordinator(paths, holder, waitMs);
  const lock = await acquireLock(paths.dir, { identityPath: paths.identity, details: { role: STOP_ROLE, slug } });
  if (!lock.ok) {
    const e = lock.error;
    if (e.reason === 'bad_path') return { kind: 'not_running', slug };
    if (e.reason === 'lock_held') {
      // A coordinator that started since we looked is stopped as usual.
      const now = await liveCoordinator(paths);
      if (now !== undefined && !isStopHolder(now)) return signalCoordinator(paths, now, waitMs);
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

function lockedByStop(slug: string, holder: LockHolder): StopEnd {
  return {
    kind: 'locked',
    slug,
    holder,
    message: `slug ${slug} is being stopped by another runplan stop, pid ${holder.pid} (start time ${holder.startTime}, since ${holder.acquiredAt})`,
  };
}

async function signalCoordinator(paths: SlugPaths, holder: LockHolder, waitMs: number): Promise<StopEnd> {
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
  // The receipt it wrote: the newest terminal record among the slug's runs (a resumed run
  // keeps its older id, so the lock's run id is only a hint).
  let best: { receipt: JournalRecord; journal: string } | undefined;
  for (const id of await listRunIds(paths)) {
    const journal = runPaths(paths, id).journal;
    // An unreadable journal holds no receipt we could print (its view is empty).
    const receipt = (await readRun(journal)).view.terminal;
    if (receipt !== undefined && (best === undefined || receipt.ts >= best.receipt.ts)) best = { receipt, journal };
  }
  return { kind: 'stopped', holder, receipt: best?.receipt, journal: best?.journal };
}

// Every incomplete run of the slug (the caller holds the slug lock, so no coordinator of it
// is alive): its leftovers ended first, whatever the journal says, then — in a journal that
// can be written — what was ended, its open attempts closed and a run-failed receipt
// (interrupted, stopped_after_crash), so the next `run` continues it. A never-started run
// is not one (nothing of it was dispatched; `run` closes it). Empty: no incomplete run.
async function stopAfterCrash(paths: SlugPaths, opts: StopOptions): Promise<CrashedRunStop[]> {
  const prior = (await inspectRuns(paths)).filter((p) => (p.kind === 'incomplete' && !p.neverStarted) || p.kind === 'corrupt');
  const done: CrashedRunStop[] = [];
  for (const p of prior) {
    const open = [...p.journal.open.values()];
    const report = await endLeftovers(
      p.paths.runId,
      open.map((a) => a.ownerTag),
      opts.graceMs ?? 5000,
      opts.proc ? { proc: opts.proc } : {},
    );
    const stop: CrashedRunStop = {
      runId: p.paths.runId,
      journal: p.paths.journal,
      ended: report.signalled,
      survivors: report.survivors,
      receipt: undefined,
      error: undefined,
    };
    done.push(stop);
    if (p.kind === 'corrupt') {
      const s = p.status.kind === 'corrupt' ? p.status : undefined;
      stop.error = {
        reason: 'journal_corrupt',
        message: `the journal of run ${p.paths.runId} is corrupt at offset ${s?.offset ?? '?'} (seq ${s?.seq ?? '?'}): ${s?.reason ?? 'unreadable'}: ${p.paths.journal}`,
      };
      continue;
    }
    // openWriter repairs a torn tail (and journals that it did) before anything is appended.
    const opened = await openWriter(p.paths.journal, { create: false });
    if (!opened.ok) {
      stop.error = { reason: opened.error.reason, message: `cannot write the journal of run ${p.paths.runId}: ${opened.error.message}` };
      continue;
    }
    try {
      stop.receipt = await closeCrashedRun(opened.value, p, report);
    } catch (e) {
      stop.error = {
        reason: 'journal_failed',
        message: `cannot write the journal of run ${p.paths.runId}: ${e instanceof Error ? e.message : String(e)}`,
      };
    } finally {
      await opened.value.close().catch(() => undefined);
    }
  }
  return done;
}

// Journals what stop ended of a crashed run and, with nothing left alive, closes it: the
// usage its interrupted agents reported (recounted from their transcripts, as a resume
// does), leftovers-ended, attempt-closed per open attempt (success for one whose checkpoint
// is durable), then the receipt. With survivors it stops after leftovers-ended: the run
// stays incomplete, so `status` still shows them and a resume or another stop tries again.
async function closeCrashedRun(writer: JournalWriter, p: PriorRun, report: TeardownReport): Promise<JournalRecord | undefined> {
  const fold = p.journal;
  // What openWriter just repaired is no news from the run: last heard of before that.
  const lastSeen = fold.lastEvent ?? null;
  const startedAt = fold.startedTs;
  const open = [...fold.open.values()];
  const formats = await taskFormats(fold.started?.planCopy);
  let usage = fold.usage;
  let costUsd = fold.costUsd;
  for (const a of open) {
    const recount: UsageData | undefined = await recountedUsage(a, formats.get(a.taskId));
    if (recount === undefined) continue;
    usage = addUsage(usage, recount.usage);
    costUsd += recount.costUsd ?? 0;
    await writer.append('usage', recount as unknown as Record<string, unknown>);
  }
  const me: ProcessIdentity = processIdentity(process.pid) ?? { pid: process.pid, startTime: 0, bootId: 'unknown', host: 'unknown' };
  await writer.append('leftovers-ended', {
    stoppedBy: me,
    previous: fold.coordinator,
    lastSeen,
    tagPrefix: runTagPrefix(p.paths.runId),
    attempts: open.map((a) => ({ taskId: a.taskId, attempt: a.attempt, ownerTag: a.ownerTag })),
    result: report.result,
    signalled: report.signalled,
    survivors: report.survivors,
  } satisfies LeftoversEndedData as unknown as Record<string, unknown>);
  if (report.survivors.length > 0) return undefined;

  const message = 'the coordinator died during this attempt; runplan stop ended what it left running';
  for (const a of open) {
    const checkpoint = fold.checkpoints.find((c) => c.taskId === a.taskId && c.attempt === a.attempt);
    const closed: AttemptClosedData =
      checkpoint !== undefined
        ? {
            taskId: a.taskId,
            attempt: a.attempt,
            outcome: 'success',
            reason: 'ok',
            class: null,
            phase: null,
            failure: null,
            checkpointId: checkpoint.id,
            evidence: [],
            survivors: [],
            durationMs: 0,
          }
        : {
            taskId: a.taskId,
            attempt: a.attempt,
            outcome: 'interrupted',
            reason: 'stopped_after_crash',
            class: 'interrupted',
            phase: null,
            failure: { class: 'interrupted', reason: 'stopped_after_crash', phase: 'run', message, evidenceTail: '' },
            checkpointId: null,
            evidence: [],
            survivors: [],
            durationMs: 0,
          };
    await writer.append('attempt-closed', closed as unknown as Record<string, unknown>);
  }
  const interrupted = open.find((a) => !fold.checkpoints.some((c) => c.taskId === a.taskId && c.attempt === a.attempt));
  const ended =
    report.signalled.length > 0
      ? `ended ${report.signalled.length} leftover process(es): ${report.signalled.join(' ')}`
      : 'no leftover process was alive';
  const dead = fold.coordinator !== null ? `pid ${fold.coordinator.pid}` : 'unknown';
  const receipt: RunFailedData = {
    logicalRunId: p.paths.runId,
    class: 'interrupted',
    reason: 'stopped_after_crash',
    message: `the coordinator (${dead}) died${lastSeen !== null ? ` after ${lastSeen}` : ''}; runplan stop ${ended}`,
    task: interrupted?.taskId ?? null,
    phase: 'run',
    evidence: [],
    signal: null,
    tasksDone: fold.tasksDone(),
    attempts: fold.attemptsTotal,
    usage,
    costUsd: shownCost(costUsd),
    durationMs: startedAt !== undefined && lastSeen !== null ? Math.max(0, Date.parse(lastSeen) - Date.parse(startedAt)) : 0,
  };
  return writer.appendTerminal('run-failed', receipt as unknown as Record<string, unknown>);
}

// Each task's output format, from the run's plan copy (what its transcripts are written in).
async function taskFormats(planCopy: string | undefined): Promise<Map<string, AgentFormat>> {
  const formats = new Map<string, AgentFormat>();
  if (planCopy === undefined) return formats;
  try {
    const copy = JSON.parse(await readFile(planCopy, 'utf8')) as { tasks?: Array<{ id?: unknown; format?: unknown }> };
    for (const t of copy.tasks ?? []) {
      if (typeof t.id === 'string' && (t.format === 'text' || t.format === 'claude-stream-json' || t.format === 'codex-json'))
        formats.set(t.id, t.format);
    }
  } catch {
    // No plan copy: usage already journaled still counts; nothing is recounted.
  }
  return formats;
}
