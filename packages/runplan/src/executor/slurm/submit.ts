import type { SlurmExecutorSpec } from '../spec.js';

/** Added to deadline + grace for the job's own `--time`, so Slurm's fence never fires before runplan's. */
export const BACKSTOP_MARGIN_MS = 30_000;

// The job's backstop time limit in whole minutes (Slurm's granularity), rounded up: an
// orphaned job dies even when no coordinator is left to cancel it.
export function backstopMinutes(deadlineMs: number, graceMs: number): number {
  return Math.max(1, Math.ceil((deadlineMs + graceMs + BACKSTOP_MARGIN_MS) / 60_000));
}

/** What one job is submitted with. */
export interface JobRequest {
  argv: readonly string[];
  cwd: string;
  /** The attempt's ownerTag: the job's name and comment, how it is found after a crash. */
  ownerTag: string;
  timeMinutes: number;
}

// The srun argv of one job. srun, not sbatch: it forwards the prompt to the command's stdin
// and its stdout back as it is written (README "Slurm" says why). srun's jobs are
// interactive, which Slurm never requeues (sbatch's --no-requeue means the same there):
// every retry stays runplan's.
export function srunArgv(spec: SlurmExecutorSpec, job: JobRequest): string[] {
  return [
    'srun',
    `--job-name=${job.ownerTag}`,
    `--comment=${job.ownerTag}`,
    `--chdir=${job.cwd}`,
    `--time=${job.timeMinutes}`,
    '--ntasks=1',
    '--quiet',
    ...(spec.partition !== undefined ? [`--partition=${spec.partition}`] : []),
    ...(spec.account !== undefined ? [`--account=${spec.account}`] : []),
    ...spec.extraArgs,
    '--',
    ...job.argv,
  ];
}
