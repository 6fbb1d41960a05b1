import { capture } from '@runplan/settle';

// The Slurm client commands the executor runs (squeue, scancel, scontrol, sacct): argv
// only, each held to a short deadline so a controller that does not answer cannot hang
// the coordinator.

/** The Slurm client tools an executor run needs on PATH (validate warns, run refuses). */
export const SLURM_TOOLS = ['srun', 'sbatch', 'squeue', 'scancel', 'sacct'] as const;

/** How long one client command may take (Slurm's own MessageTimeout defaults to 10 s). */
const CLIENT_DEADLINE_MS = 30_000;

/** One client command's answer. */
export interface ClientAnswer {
  ok: boolean;
  stdout: string;
  /** What went wrong, for a message: stderr, or how it settled. */
  problem: string;
}

// Runs one Slurm client command to its end.
export async function slurmClient(argv: readonly string[]): Promise<ClientAnswer> {
  const c = await capture({ argv, input: '', deadlineMs: CLIENT_DEADLINE_MS, graceMs: 1000, maxBuffer: 4 << 20 });
  const ok = c.reason === 'exited' && c.exitCode === 0;
  const stderr = c.stderr.toString('utf8').trim();
  return { ok, stdout: c.stdout.toString('utf8'), problem: ok ? '' : stderr || `${argv[0]} ${c.reason} ${c.exitCode ?? c.signal ?? ''}` };
}

/** A job as squeue lists it. */
export interface QueuedJob {
  jobId: string;
  name: string;
  /** squeue's long state: PENDING, RUNNING, COMPLETING, … (COMPLETED and the like with `all`). */
  state: string;
}

// The jobs whose name starts with `prefix` (the ownerTag or a run's tag prefix); `all`
// also lists those that ended while Slurm still keeps their record (MinJobAge).
export async function queuedJobs(prefix: string, opts: { all?: boolean } = {}): Promise<QueuedJob[]> {
  const answer = await slurmClient(['squeue', '--noheader', ...(opts.all ? ['--states=all'] : []), '--format=%i|%T|%j']);
  if (!answer.ok) throw new Error(`squeue: ${answer.problem}`);
  const jobs: QueuedJob[] = [];
  for (const line of answer.stdout.split('\n')) {
    const [jobId, state, ...name] = line.trim().split('|');
    const n = name.join('|');
    if (jobId !== undefined && jobId !== '' && state !== undefined && n.startsWith(prefix)) jobs.push({ jobId, name: n, state });
  }
  return jobs;
}

// Sends `signal` to the jobs (scancel --signal), or cancels them outright when none is given.
export async function cancelJobs(jobIds: readonly string[], signal?: 'TERM' | 'KILL'): Promise<ClientAnswer> {
  if (jobIds.length === 0) return { ok: true, stdout: '', problem: '' };
  return slurmClient(['scancel', ...(signal ? [`--signal=${signal}`] : []), ...jobIds]);
}

/** A job's record as the controller (or accounting) keeps it. */
export interface JobRecord {
  state: string;
  exitCode: number | null;
  /** The signal that ended the job's command (the second half of ExitCode), 0 for none. */
  signalNumber: number;
  nodes: string;
}

// A job's record: `scontrol show job` while the controller keeps it (MinJobAge after its
// end), else `sacct` (a cluster with accounting); undefined when neither knows it.
export async function jobRecord(jobId: string): Promise<JobRecord | undefined> {
  const shown = await slurmClient(['scontrol', '--oneliner', 'show', 'job', jobId]);
  if (shown.ok) {
    const field = (key: string): string => new RegExp(`(?:^|\\s)${key}=(\\S*)`).exec(shown.stdout)?.[1] ?? '';
    return { ...exitCodeOf(field('ExitCode')), state: field('JobState'), nodes: field('NodeList') };
  }
  const acct = await slurmClient([
    'sacct',
    '--noheader',
    '--parsable2',
    '--allocations',
    `--jobs=${jobId}`,
    '--format=State,ExitCode,NodeList',
  ]);
  const row = acct.ok ? acct.stdout.split('\n')[0]?.split('|') : undefined;
  if (row === undefined || row.length < 3 || row[0] === '') return undefined;
  // sacct writes "CANCELLED by 0": the state is the first word.
  return { ...exitCodeOf(row[1] ?? ''), state: (row[0] ?? '').split(' ')[0] ?? '', nodes: row[2] ?? '' };
}

// Slurm's `ExitCode=<code>:<signal>`.
function exitCodeOf(text: string): { exitCode: number | null; signalNumber: number } {
  const m = /^(\d+):(\d+)$/.exec(text);
  return m ? { exitCode: Number(m[1]), signalNumber: Number(m[2]) } : { exitCode: null, signalNumber: 0 };
}

/** Job states after which nothing of the job runs any more. */
const TERMINAL_STATES = new Set([
  'COMPLETED',
  'FAILED',
  'TIMEOUT',
  'CANCELLED',
  'OUT_OF_MEMORY',
  'NODE_FAIL',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
]);

// Whether a job state is final.
export function isTerminalState(state: string): boolean {
  return TERMINAL_STATES.has(state);
}
