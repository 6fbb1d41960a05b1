import { capture, stream, type Execution } from '@runplan/settle';
import type { CommandEnd, CommandSpec, Executor, ExecutorHooks } from '../contract.js';
import type { SlurmExecutorSpec } from '../spec.js';
import { queuedJobs } from './cli.js';
import { endJobs, finalRecord, signalJobs, watchSubmission } from './jobs.js';
import { jobOutcome } from './outcome.js';
import { backstopMinutes, srunArgv } from './submit.js';

/**
 * Test-only: `RUNPLAN_SLURM_FAILPOINT=no-fence` disables runplan's own deadline fence, so
 * the job's backstop `--time` is what ends it (the test of Slurm's own TIMEOUT).
 */
export const SLURM_FAILPOINT = 'RUNPLAN_SLURM_FAILPOINT';

/** How long after srun's exit the controller may take to write the job's final state. */
const RECORD_WAIT_MS = 10_000;

// A coordinator running inside a Slurm allocation must still submit jobs of their own:
// srun would otherwise start a step of the outer job, named by nobody.
const OUTER_JOB = { SLURM_JOB_ID: undefined, SLURM_JOBID: undefined };

// The slurm executor: each command a job started with srun from this host (stdio forwarded),
// named by the attempt's ownerTag; runplan's deadline cancels it (TERM, KILL after grace,
// verified), the job's `--time` is the backstop; the outcome is read from Slurm's record.
export function slurmExecutor(spec: SlurmExecutorSpec): Executor {
  return {
    kind: 'slurm',
    stream: (cmd, initialState, consume, hooks) =>
      streamJob(spec, { cmd, hooks: hooks ?? {} }, (argv, local) =>
        stream(
          { ...cmd, argv, deadlineMs: local.backstopMs, signal: local.signal, env: { ...cmd.env, ...OUTER_JOB } },
          initialState,
          consume,
        ),
      ),
    capture: async (gate, hooks) => {
      let captured: Awaited<ReturnType<typeof capture>> | undefined;
      // A gate keeps settle's own deadline on srun (gate_deadline): the job is cancelled after it.
      const end = await streamJob(
        spec,
        { cmd: { ...gate, deadlineMs: undefined }, hooks: hooks ?? {}, gateDeadlineMs: gate.deadlineMs },
        async (argv) => {
          captured = await capture({ ...gate, argv, env: { ...gate.env, ...OUTER_JOB } });
          return { execution: captured, state: undefined };
        },
      );
      const c = captured!;
      return { ...c, ...end.execution, stdout: c.stdout, stderr: c.stderr };
    },
    listByOwner: async (prefix) => (await queuedJobs(prefix)).map((j) => ({ id: j.jobId, ownerTag: j.name, state: j.state })),
    teardownByOwner: (prefix, graceMs) => endJobs(prefix, graceMs),
  };
}

/** One job's run: the command, what to report, and (gates) the deadline settle enforces on srun. */
interface JobRun {
  cmd: CommandSpec;
  hooks: ExecutorHooks;
  gateDeadlineMs?: number;
}

/**
 * How long srun may wait for a job's start beyond its --time before settle ends it: the job's
 * limit counts from its start, srun's local hold from its submission, so a job that queued
 * for a while must not be cut short by the hold before Slurm's own limit ends it (runplan's
 * deadline fence, which counts from the submission, ends it long before either).
 */
const QUEUE_ALLOWANCE_MS = 10 * 60_000;

/** How srun itself is held locally: far past the job's --time, and ended once the fence ended the job. */
interface LocalHold {
  backstopMs: number;
  signal: AbortSignal;
}

type Launch<S> = (argv: string[], local: LocalHold) => Promise<{ execution: Execution; state: S | undefined }>;

// Submits one job, watches for its id, holds it to the deadline, and reads its outcome.
async function streamJob<S>(spec: SlurmExecutorSpec, run: JobRun, launch: Launch<S>): Promise<CommandEnd<S>> {
  const { cmd, hooks } = run;
  const graceMs = cmd.graceMs ?? 5000;
  const deadlineMs = cmd.deadlineMs ?? run.gateDeadlineMs ?? 0;
  const timeMinutes = backstopMinutes(deadlineMs, graceMs);
  const argv = srunArgv(spec, { argv: cmd.argv, cwd: cmd.cwd ?? process.cwd(), ownerTag: cmd.ownerTag, timeMinutes });
  const watch = await watchSubmission(cmd.ownerTag, async (jobId) => {
    await hooks.onSubmitted?.({ jobId, name: cmd.ownerTag });
  });
  // srun waits for its step's end after a cancel (for many seconds): once the fence has
  // ended the job, srun itself is torn down here.
  const fenced = new AbortController();
  const fence = deadlineFence(cmd, deadlineMs, () => fenced.abort('SIGTERM'));
  const signal = cmd.signal !== undefined ? AbortSignal.any([cmd.signal, fenced.signal]) : fenced.signal;
  let launched: Awaited<ReturnType<Launch<S>>>;
  try {
    launched = await launch(argv, { backstopMs: timeMinutes * 60_000 + graceMs + 60_000 + QUEUE_ALLOWANCE_MS, signal });
  } finally {
    fence.clear();
  }
  await fence.done;
  const jobId = await watch.stop();
  let record = jobId !== undefined ? await finalRecord(jobId, RECORD_WAIT_MS) : undefined;
  // Ended by runplan: its fence, or settle's teardown of srun (stall, the agent's terminal
  // line, an interrupt); Slurm's record of such a job says CANCELLED or FAILED, and that is ours.
  const { reason, endedBy } = launched.execution;
  const ownEnd = fence.fired || endedBy === 'consumer' || (reason !== 'exited' && reason !== 'signaled');
  // Whatever is left of the job (srun torn down locally, a job still completing) is ours to end.
  // When Slurm cannot be asked (squeue fails: the controller is down), nothing the attempt
  // started can be verified ended: said as such, never as runplan's own error.
  let unanswered = fence.error;
  let left: { ended: string[]; survivors: string[] } = { ended: [], survivors: [] };
  try {
    left = await endJobs(cmd.ownerTag, graceMs);
  } catch (e) {
    unanswered ??= e;
  }
  if (left.ended.length > 0 && jobId !== undefined) record = await finalRecord(jobId, RECORD_WAIT_MS);
  if (jobId !== undefined && record !== undefined) {
    await hooks.onEnded?.({ jobId, state: record.state, exitCode: record.exitCode, nodes: record.nodes });
  }
  const execution: Execution = fence.fired ? timedOut(launched.execution) : launched.execution;
  const outcome = jobOutcome(
    execution,
    jobId !== undefined && record !== undefined ? { ...record, jobId } : undefined,
    ownEnd || left.ended.length > 0,
  );
  if (unanswered !== undefined) {
    const said = (unanswered instanceof Error ? unanswered.message : String(unanswered)).trim().split('\n').at(-1);
    return {
      ...outcome,
      state: launched.state,
      engine: {
        reason: 'slurm_unreachable',
        message: `Slurm could not be asked whether the attempt's jobs${jobId !== undefined ? ` (${jobId})` : ''} are gone: ${said}`,
      },
    };
  }
  if (left.survivors.length > 0) {
    return {
      ...outcome,
      state: launched.state,
      engine: { reason: 'slurm_cancel_failed', message: `Slurm jobs still queued after scancel: ${left.survivors.join(' ')}` },
    };
  }
  return { ...outcome, state: launched.state };
}

/** runplan's own deadline on a job: fired once; `done` settles when its cancels finished. */
interface Fence {
  fired: boolean;
  done: Promise<void>;
  /** The fence's cancels failed (Slurm could not be asked): srun is ended all the same. */
  error?: unknown;
  clear(): void;
}

// At the deadline: scancel --signal=TERM, then after grace KILL and cancel, then srun is
// ended (the caller's endJobs verifies with squeue). Disabled by the test-only fail point.
function deadlineFence(cmd: CommandSpec, deadlineMs: number, ended: () => void): Fence {
  const fence: Fence = { fired: false, done: Promise.resolve(), clear: () => {} };
  if (deadlineMs <= 0 || cmd.deadlineMs === undefined || process.env[SLURM_FAILPOINT] === 'no-fence') return fence;
  const timer = setTimeout(() => {
    fence.fired = true;
    fence.done = signalJobs(cmd.ownerTag, cmd.graceMs ?? 5000).then(
      () => ended(),
      (e: unknown) => {
        fence.error = e;
        ended();
      },
    );
  }, deadlineMs);
  fence.clear = () => clearTimeout(timer);
  return fence;
}

// The execution of a job runplan's fence ended: timed out, whatever srun's teardown said.
function timedOut(execution: Execution): Execution {
  const { interruptSignal: _, ...rest } = execution;
  return { ...rest, reason: 'timed_out', deadlineMs: execution.deadlineMs ?? 0 };
}
