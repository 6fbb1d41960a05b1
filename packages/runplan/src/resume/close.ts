import { rename } from 'node:fs/promises';
import { openWriter, type JournalWriter } from '@runplan/journal';
import { ZERO_USAGE, type JobsCancelledData, type RunFailedData } from '../events/types.js';
import { releaseReserve } from '../host/disk-reserve.js';
import { compactUtc } from '../host/state.js';
import type { RunEnd } from '../coordinator/types.js';
import { endLeftovers, journaledCgroupParents } from './leftovers.js';
import { cancelRunJobs, mayHaveJobs } from './slurm-jobs.js';
import type { PriorRun } from './inspect.js';

/** How closing earlier runs went: what run-started's `abandoned` lists, and a line for people per notable run. */
type Closed = { ok: true; abandoned: string[]; notices: string[] } | { ok: false; end: RunEnd };

// `--fresh`: closes every incomplete run with a `run-failed` receipt of class abandoned
// (after ending its crashed attempts' processes, found by ownerTag — by the run's tag prefix
// too, so a corrupt journal's are found as well); a corrupt journal cannot take a receipt,
// so its directory is renamed aside. One notice per run whose processes were ended.
export async function closePriorRuns(runs: PriorRun[]): Promise<Closed> {
  const abandoned: string[] = [];
  const notices: string[] = [];
  for (const p of runs) {
    const run = p.paths;
    const corrupt = p.kind === 'corrupt';
    const { signalled, survivors, jobs } = await endCrashedAttempts(p);
    if (signalled.length > 0)
      notices.push(
        `runplan: leftovers_ended: run ${run.runId}: ended ${signalled.length} process(es) its crashed coordinator left running: ${signalled.join(' ')}`,
      );
    if (jobs !== undefined && jobs.cancelled.length > 0)
      notices.push(
        `runplan: jobs_cancelled: run ${run.runId}: cancelled ${jobs.cancelled.length} Slurm job(s): ${jobs.cancelled.join(' ')}`,
      );
    if (survivors.length > 0)
      notices.push(`runplan: teardown_failed: run ${run.runId}: processes survived SIGKILL: ${survivors.join(' ')}`);
    if (corrupt) {
      const aside = `${run.dir}.corrupt-${compactUtc(new Date())}`;
      await rename(run.dir, aside);
      await releaseReserve(aside);
      abandoned.push(
        `${run.runId} (corrupt journal renamed to ${aside}${survivors.length > 0 ? `; processes that survived teardown: ${survivors.join(' ')}` : ''})`,
      );
      continue;
    }
    // openWriter repairs a torn tail (and journals that it did) before the receipt.
    const writer = await openWriter(run.journal, { create: false });
    if (!writer.ok)
      return {
        ok: false,
        end: { kind: 'refused', reason: writer.error.reason, message: `cannot close ${run.runId} as abandoned: ${writer.error.message}` },
      };
    // The jobs it cancelled are journaled in the run they belonged to, as a resume does.
    if (jobs !== undefined) await writer.value.append('jobs-cancelled', jobs as unknown as Record<string, unknown>);
    await closeAbandoned(
      writer.value,
      run.runId,
      'abandoned',
      `closed by runplan run --fresh${survivors.length > 0 ? `; processes that survived teardown: ${survivors.join(' ')}` : ''}`,
    );
    // Its receipt is written: no coordinator will take it up again, so the reserve goes, as at every receipt.
    await releaseReserve(run.dir);
    abandoned.push(run.runId);
  }
  return { ok: true, abandoned, notices };
}

// Closes never-started runs (see chooseRun): a receipt into a journal holding its header,
// the directory renamed aside when the journal holds no whole record. No attempt of theirs
// can exist (none is dispatched before run-started), so there is nothing to tear down.
export async function closeNeverStarted(runs: PriorRun[]): Promise<Closed> {
  const abandoned: string[] = [];
  const notices: string[] = [];
  for (const { paths: run, scan } of runs) {
    const said = `run ${run.runId} was created but never started (crash before run-started)`;
    if (scan === undefined || scan.count === 0) {
      const aside = `${run.dir}.never-started-${compactUtc(new Date())}`;
      await rename(run.dir, aside);
      abandoned.push(`${run.runId} (never started; its journal held no whole record, renamed to ${aside})`);
      notices.push(`runplan: never_started: ${said}; its journal holds no whole record, moved aside to ${aside}`);
      continue;
    }
    // openWriter repairs a torn run-started line (and journals that it did) before the receipt.
    const writer = await openWriter(run.journal, { create: false, runId: run.runId });
    if (!writer.ok)
      return {
        ok: false,
        end: {
          kind: 'refused',
          reason: writer.error.reason,
          message: `cannot close never-started run ${run.runId}: ${writer.error.message}`,
        },
      };
    await closeAbandoned(writer.value, run.runId, 'never_started', `${said}; closed by runplan run`);
    abandoned.push(`${run.runId} (never started)`);
    notices.push(`runplan: never_started: ${said}; closing it`);
  }
  return { ok: true, abandoned, notices };
}

// Writes the receipt of a run closed without running on (`--fresh`, never started): a
// run-failed of class abandoned, nothing counted; closes the writer either way.
async function closeAbandoned(writer: JournalWriter, runId: string, reason: 'abandoned' | 'never_started', message: string): Promise<void> {
  try {
    await writer.appendTerminal('run-failed', {
      logicalRunId: runId,
      class: 'abandoned',
      reason,
      message,
      task: null,
      phase: null,
      evidence: [],
      signal: null,
      tasksDone: 0,
      attempts: 0,
      usage: ZERO_USAGE,
      costUsd: 0,
      durationMs: 0,
    } satisfies RunFailedData as unknown as Record<string, unknown>);
  } finally {
    await writer.close();
  }
}

// Ends what is left of a dead coordinator's attempts: every process carrying the run's
// ownerTag prefix or an open attempt's journaled ownerTag (its view holds the journal as far
// as it could be read; an unreadable one names none, and the prefix alone finds them).
// Nothing else is touched (their cgroups are looked for where attempt-started said, too).
// Held under the slug lock, so no live coordinator of the run owns them.
async function endCrashedAttempts(p: PriorRun): Promise<{ signalled: number[]; survivors: number[]; jobs: JobsCancelledData | undefined }> {
  const open = [...p.journal.open.values()];
  const tags = open.map((a) => a.ownerTag);
  // Its Slurm jobs first (named by the same tags); one still queued is a survivor.
  const jobs = mayHaveJobs(open) ? await cancelRunJobs(p.paths.runId, 2000) : undefined;
  const report = await endLeftovers(p.paths.runId, tags, 2000, { cgroupParents: journaledCgroupParents(open) });
  return {
    signalled: report.signalled,
    survivors: [...report.survivors, ...(jobs?.survivors ?? []).map(Number).filter(Number.isInteger)],
    jobs,
  };
}
