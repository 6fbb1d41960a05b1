import { readFile } from 'node:fs/promises';
import { processIdentity, type ProcessIdentity, type ProcSource, type TeardownReport } from '@runplan/settle';
import { openWriter, type JournalRecord, type JournalWriter } from '@runplan/journal';
import { AGENT_FORMATS, type AgentFormat } from '../plan/types.js';
import {
  addUsage,
  shownCost,
  type AttemptClosedData,
  type LeftoversEndedData,
  type RunFailedData,
  type UsageTotals,
} from '../events/types.js';
import { endLeftovers, journaledCgroupParents, runTagPrefix } from '../resume/leftovers.js';
import { recountedUsage } from '../resume/recount.js';
import { cancelRunJobs, mayHaveJobs } from '../resume/slurm-jobs.js';
import { inspectRuns, type PriorRun } from '../resume/inspect.js';
import { slugThreadTotals } from '../resume/slug-spend.js';
import type { SlugPaths } from '../host/state.js';
import { releaseReserve } from '../host/disk-reserve.js';
import { writeRunReport } from './report.js';

/** What `stop` did with one run whose coordinator had died. */
export interface CrashedRunStop {
  runId: string;
  journal: string;
  /** Pids signalled (each verified by pid + start time just before). */
  ended: number[];
  /** Pids still alive after SIGKILL: the run is left incomplete. */
  survivors: number[];
  /** Slurm job ids cancelled (the run's jobs, found by its tag prefix). */
  jobsCancelled: string[];
  /** Slurm jobs still queued after scancel: the run is left incomplete. */
  jobsLeft: string[];
  /** The `run-failed` receipt written (class interrupted, reason stopped_after_crash). */
  receipt: JournalRecord | undefined;
  /** Why nothing (or not everything) could be journaled: the leftovers were ended all the same. */
  error: { reason: string; message: string } | undefined;
  /** The run's report (`<run dir>/report.html`), written at its receipt as every receipt's is; undefined without one. */
  report?: string;
}

export interface StopOptions {
  /** After a crash: how long the leftovers get after SIGTERM before SIGKILL. Default 5000. */
  graceMs?: number;
  /** Injected /proc reader for ending leftovers (tests). */
  proc?: Partial<ProcSource>;
}

// Every incomplete run of the slug (the caller holds the slug lock, so no coordinator of it
// is alive): its leftovers ended first, whatever the journal says, then — in a journal that
// can be written — what was ended, its open attempts closed and a run-failed receipt
// (interrupted, stopped_after_crash), so the next `run` continues it. A never-started run
// is not one (nothing of it was dispatched; `run` closes it). Empty: no incomplete run.
export async function stopAfterCrash(paths: SlugPaths, opts: StopOptions): Promise<CrashedRunStop[]> {
  const all = await inspectRuns(paths);
  const prior = all.filter((p) => (p.kind === 'incomplete' && !p.neverStarted) || p.kind === 'corrupt');
  // What the slug already counted of each codex thread, as a resume reads it: a crashed
  // continuation's agent may have resumed a thread an earlier run counted.
  const threadTotals = slugThreadTotals(all);
  const done: CrashedRunStop[] = [];
  for (const p of prior) {
    const open = [...p.journal.open.values()];
    // Its Slurm jobs first, by the run's tag prefix (their names); then the local processes.
    const jobs = mayHaveJobs(open) ? await cancelRunJobs(p.paths.runId, opts.graceMs ?? 5000) : undefined;
    const report = await endLeftovers(
      p.paths.runId,
      open.map((a) => a.ownerTag),
      opts.graceMs ?? 5000,
      { ...(opts.proc ? { proc: opts.proc } : {}), cgroupParents: journaledCgroupParents(open) },
    );
    const stop: CrashedRunStop = {
      runId: p.paths.runId,
      journal: p.paths.journal,
      ended: report.signalled,
      survivors: report.survivors,
      jobsCancelled: jobs?.cancelled ?? [],
      jobsLeft: jobs?.survivors ?? [],
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
      if (jobs !== undefined) await opened.value.append('jobs-cancelled', jobs as unknown as Record<string, unknown>);
      // A job still queued leaves the run incomplete, as a surviving process does.
      if (jobs === undefined || jobs.survivors.length === 0)
        stop.receipt = await closeCrashedRun(opened.value, p, report, threadTotals, jobs?.cancelled.length ?? 0);
    } catch (e) {
      stop.error = {
        reason: 'journal_failed',
        message: `cannot write the journal of run ${p.paths.runId}: ${e instanceof Error ? e.message : String(e)}`,
      };
    } finally {
      await opened.value.close().catch(() => undefined);
    }
    if (stop.receipt !== undefined) {
      // The run ended here, as at a coordinator's receipt: its reserve goes, its report is written.
      await releaseReserve(p.paths.dir);
      stop.report = await writeRunReport(p.paths.journal);
    }
  }
  return done;
}

// Journals what stop ended of a crashed run and, with nothing left alive, closes it: the
// usage its interrupted agents reported (recounted from their transcripts, as a resume
// does), leftovers-ended, attempt-closed per open attempt (success for one whose checkpoint
// is durable), then the receipt. With survivors it stops after leftovers-ended: the run
// stays incomplete, so `status` still shows them and a resume or another stop tries again.
async function closeCrashedRun(
  writer: JournalWriter,
  p: PriorRun,
  report: TeardownReport,
  threadTotals: Map<string, UsageTotals>,
  jobsCancelled: number,
): Promise<JournalRecord | undefined> {
  const fold = p.journal;
  // What openWriter just repaired is no news from the run: last heard of before that.
  const lastSeen = fold.lastEvent ?? null;
  const startedAt = fold.startedTs;
  const open = [...fold.open.values()];
  const formats = await taskFormats(fold.started?.planCopy);
  let usage = fold.usage;
  let costUsd = fold.costUsd;
  for (const a of open) {
    for (const recount of await recountedUsage(a, formats.get(a.taskId), threadTotals)) {
      usage = addUsage(usage, recount.usage);
      costUsd += recount.costUsd ?? 0;
      await writer.append('usage', recount as unknown as Record<string, unknown>);
    }
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
  // What it ended: the processes and the Slurm jobs (none of either alive: said so).
  const endedParts = [
    ...(report.signalled.length > 0 ? [`${report.signalled.length} leftover process(es): ${report.signalled.join(' ')}`] : []),
    ...(jobsCancelled > 0 ? [`${jobsCancelled} Slurm job(s)`] : []),
  ];
  const ended = endedParts.length > 0 ? `ended ${endedParts.join(' and ')}` : 'no leftover process or job was alive';
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
      if (typeof t.id === 'string' && AGENT_FORMATS.includes(t.format as AgentFormat)) formats.set(t.id, t.format as AgentFormat);
    }
  } catch {
    // No plan copy: usage already journaled still counts; nothing is recounted.
  }
  return formats;
}
