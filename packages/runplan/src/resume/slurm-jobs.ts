import type { JobsCancelledData } from '../events/run-events.js';
import type { OpenAttempt } from '../events/view-types.js';
import { slurmExecutor } from '../executor/slurm/executor.js';
import { leavesJobsUnverified } from '../events/reasons.js';
import { runTagPrefix } from './leftovers.js';
import type { Refusal } from './refusal.js';

// The Slurm jobs a crashed coordinator left: every job is named by its attempt's ownerTag,
// and every tag of a run starts with the run's prefix, so squeue finds them even when the
// crash came between submission and `job-submitted`. Asked only of a run that used Slurm
// (its open attempts say so, or its plan does): a host without Slurm is never asked.

const slurm = slurmExecutor({ kind: 'slurm', extraArgs: [] });

// Whether a crashed run may have left Slurm jobs.
export function mayHaveJobs(open: readonly OpenAttempt[], planUsesSlurm = false): boolean {
  return planUsesSlurm || open.some((a) => a.executor === 'slurm');
}

// The ids of the run's jobs still in the queue (read-only); [] when squeue cannot answer.
export async function queuedRunJobs(runId: string): Promise<string[]> {
  try {
    return (await slurm.listByOwner(runTagPrefix(runId))).map((j) => j.id);
  } catch {
    return [];
  }
}

// Cancels the run's jobs (TERM, KILL after grace, verified with squeue). Undefined when
// there were none; a squeue that cannot answer leaves every job it could not list a survivor.
export async function cancelRunJobs(runId: string, graceMs: number): Promise<JobsCancelledData | undefined> {
  const tagPrefix = runTagPrefix(runId);
  try {
    const { ended, survivors } = await slurm.teardownByOwner(tagPrefix, graceMs);
    if (ended.length === 0 && survivors.length === 0) return undefined;
    return { tagPrefix, cancelled: ended, survivors };
  } catch (e) {
    return { tagPrefix, cancelled: [], survivors: [`squeue failed: ${e instanceof Error ? e.message : String(e)}`] };
  }
}

// Before a run starts after one that failed with its Slurm teardown unverified (Slurm could
// not be asked, or a job stayed queued after scancel), that run's jobs are ended (TERM, KILL
// after grace, verified with squeue): a continuation must not run a task again beside the
// job still running it. A refusal while one stays queued or Slurm cannot be asked; else the
// notice naming the jobs it cancelled, if any.
export async function endUnverifiedJobs(
  last: { runId: string; failedReason: string | null } | undefined,
  graceMs: number,
): Promise<{ ok: true; notices: string[] } | { ok: false; refusal: Refusal }> {
  if (last === undefined || last.failedReason === null || !leavesJobsUnverified(last.failedReason)) return { ok: true, notices: [] };
  const jobs = await cancelRunJobs(last.runId, graceMs);
  if (jobs === undefined) return { ok: true, notices: [] };
  if (jobs.survivors.length > 0) {
    return {
      ok: false,
      refusal: {
        reason: 'slurm_cancel_failed',
        message: `run ${last.runId} ended ${last.failedReason} and its Slurm jobs could not be ended: ${jobs.survivors.join(' ')}`,
        hint: `run the same command once Slurm answers, or scancel the run's jobs yourself (their names start with ${jobs.tagPrefix})`,
      },
    };
  }
  return {
    ok: true,
    notices: [
      `runplan: jobs_cancelled: run ${last.runId}: cancelled ${jobs.cancelled.length} Slurm job(s) it left: ${jobs.cancelled.join(' ')}`,
    ],
  };
}
