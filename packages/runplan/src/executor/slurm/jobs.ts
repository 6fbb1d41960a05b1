import { setTimeout as sleep } from 'node:timers/promises';
import { cancelJobs, isTerminalState, jobRecord, queuedJobs, type JobRecord } from './cli.js';

// Finding a job by its name and waiting for the controller: Slurm has no event to wait
// on from outside, so these poll it (every POLL_MS, each bounded).

const POLL_MS = 200;

/**
 * Watches the queue for the job named `ownerTag` until it is found or `stop()` is called:
 * the job id is known only once the controller accepted the submission (srun does not
 * print it), and it is journaled as `job-submitted`.
 */
export async function watchSubmission(
  ownerTag: string,
  onFound: (jobId: string) => Promise<void>,
): Promise<{ stop: () => Promise<string | undefined> }> {
  // The attempt's earlier jobs (its command's, before a gate's) carry the same name.
  const earlier = new Set(await namedJobs(ownerTag));
  const lookup = async (): Promise<string | undefined> => (await namedJobs(ownerTag)).find((id) => !earlier.has(id));
  let stopped = false;
  let found: string | undefined;
  const search = async (): Promise<void> => {
    while (!stopped && found === undefined) {
      found = await lookup();
      if (found === undefined) await sleep(POLL_MS);
    }
    if (found !== undefined) await onFound(found);
  };
  const watching = search();
  return {
    stop: async () => {
      stopped = true;
      await watching;
      // A job that started and ended between two looks is still listed (MinJobAge).
      if (found === undefined) {
        found = await lookup();
        if (found !== undefined) await onFound(found);
      }
      return found;
    },
  };
}

// The ids of the jobs named exactly `name`, also those that already ended.
async function namedJobs(name: string): Promise<string[]> {
  try {
    return (await queuedJobs(name, { all: true })).filter((j) => j.name === name).map((j) => j.jobId);
  } catch {
    return [];
  }
}

// The job's record once it is final (or the last one seen after `withinMs`).
export async function finalRecord(jobId: string, withinMs: number): Promise<JobRecord | undefined> {
  const until = Date.now() + withinMs;
  for (;;) {
    const record = await jobRecord(jobId);
    if (record === undefined || isTerminalState(record.state) || Date.now() >= until) return record;
    await sleep(POLL_MS);
  }
}

// Ends every job whose name starts with `prefix`: TERM, then (after `graceMs`) KILL and a
// cancel, verified with squeue. Returns the ids it ended and those still queued after it.
export async function endJobs(prefix: string, graceMs: number): Promise<{ ended: string[]; survivors: string[] }> {
  const ids = await signalJobs(prefix, graceMs);
  if (ids.length === 0) return { ended: [], survivors: [] };
  const left = await queuedUntilGone(prefix, 15_000);
  return { ended: ids.filter((id) => !left.includes(id)), survivors: left };
}

// TERM to the jobs whose name starts with `prefix`; those still queued `graceMs` later get
// KILL and are cancelled. Returns the ids it found (not yet verified gone).
export async function signalJobs(prefix: string, graceMs: number): Promise<string[]> {
  const jobs = await queuedJobs(prefix);
  const ids = jobs.map((j) => j.jobId);
  if (ids.length === 0) return [];
  // A pending job has no process to signal: cancel it outright.
  await cancelJobs(jobs.filter((j) => j.state === 'PENDING').map((j) => j.jobId));
  await cancelJobs(ids, 'TERM');
  const left = await queuedUntilGone(prefix, graceMs);
  if (left.length > 0) {
    await cancelJobs(left, 'KILL');
    await cancelJobs(left);
  }
  return ids;
}

// Waits up to `withinMs` until no job named with the prefix is queued; returns those still there.
export async function queuedUntilGone(prefix: string, withinMs: number): Promise<string[]> {
  const until = Date.now() + withinMs;
  for (;;) {
    const left = (await queuedJobs(prefix)).map((j) => j.jobId);
    if (left.length === 0 || Date.now() >= until) return left;
    await sleep(POLL_MS);
  }
}
