import { constants } from 'node:os';
import type { Execution } from '@runplan/settle';
import type { EngineReason } from '../../events/reasons.js';
import type { JobRecord } from './cli.js';

/** What the engine's record changes about a command's execution. */
export interface JobOutcome {
  execution: Execution;
  engine?: { reason: EngineReason; message: string };
}

/**
 * The outcome from the engine's record (README "Slurm"), never from srun's exit code
 * alone: TIMEOUT (and DEADLINE) → timed_out; CANCELLED by us → the teardown's reason
 * (`cancelledByUs`: our deadline, stall, finish or interrupt); CANCELLED by anyone else →
 * slurm_cancelled; OUT_OF_MEMORY → slurm_out_of_memory; NODE_FAIL, BOOT_FAIL →
 * slurm_node_failed; PREEMPTED → slurm_preempted; FAILED and COMPLETED → the command's
 * exit code (or the signal that ended it). No record: srun's own outcome, and
 * slurm_submit_failed when srun failed without a job.
 */
export function jobOutcome(execution: Execution, job: (JobRecord & { jobId: string }) | undefined, cancelledByUs: boolean): JobOutcome {
  if (cancelledByUs || (execution.reason !== 'exited' && execution.reason !== 'signaled')) return { execution };
  if (job === undefined) {
    if (execution.reason === 'exited' && execution.exitCode === 0) return { execution };
    return {
      execution,
      engine: {
        reason: 'slurm_submit_failed',
        message: 'srun failed and Slurm has no job for it: the submission was refused (its stderr says why)',
      },
    };
  }
  const named = `Slurm job ${job.jobId}`;
  switch (job.state) {
    case 'TIMEOUT':
    case 'DEADLINE':
      return { execution: { ...execution, reason: 'timed_out' } };
    case 'CANCELLED':
      return { execution, engine: { reason: 'slurm_cancelled', message: `${named} was cancelled by someone other than runplan` } };
    case 'OUT_OF_MEMORY':
      return { execution, engine: { reason: 'slurm_out_of_memory', message: `${named} ran out of memory on ${job.nodes}` } };
    case 'NODE_FAIL':
    case 'BOOT_FAIL':
      return { execution, engine: { reason: 'slurm_node_failed', message: `${named}: its node ${job.nodes} failed (${job.state})` } };
    case 'PREEMPTED':
      return { execution, engine: { reason: 'slurm_preempted', message: `${named} was preempted` } };
    default:
      if (job.signalNumber > 0)
        return { execution: { ...execution, reason: 'signaled', exitCode: null, signal: signalName(job.signalNumber) } };
      return { execution: { ...execution, reason: 'exited', exitCode: job.exitCode ?? execution.exitCode, signal: null } };
  }
}

// The name of a signal number, as settle reports signals.
function signalName(n: number): NodeJS.Signals {
  const found = Object.entries(constants.signals).find(([, value]) => value === n);
  return (found?.[0] ?? 'SIGKILL') as NodeJS.Signals;
}
