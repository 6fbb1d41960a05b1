import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { capture } from '@runplan/settle';
import writeFileAtomic from 'write-file-atomic';
import type { SlurmExecutorSpec } from '../spec.js';
import { endJobs } from './jobs.js';

/**
 * The probe job's script, fixed (the marker's path is its one argument, never spliced in):
 * the node's name on the first line, then what the marker holds there, if it is there.
 */
const PROBE_SCRIPT = 'n=$SLURMD_NODENAME; [ -n "$n" ] || n=$(hostname); printf "%s\\n" "$n"; cat -- "$1" 2>/dev/null; exit 0';

/** How long the probe may take, queueing included: past it the answer is `unknown`. */
const PROBE_DEADLINE_MS = 60_000;

/** What a node saw of the coordinator's directory. */
export type ProbeAnswer =
  | { kind: 'seen'; node: string }
  /** The job ran on `node` and the marker was not there (or held another nonce). */
  | { kind: 'missing'; node: string }
  /** No answer (the submission refused, the queue too slow): the attempts will say. */
  | { kind: 'unknown'; problem: string };

/** One probe: with which executor, of which directory, under which name. */
export interface ProbeRequest {
  spec: SlurmExecutorSpec;
  /** The directory the attempts' worktrees are made in (the workdir's holding directory). */
  dir: string;
  /** The job's name: under the run's tag prefix, so a crashed coordinator's probe is found like its attempts. */
  ownerTag: string;
  /** The operator's interrupt: the probe is torn down with the rest. */
  signal?: AbortSignal;
}

// Whether a node of the spec's partition sees `dir`: runplan writes a marker holding a
// fresh nonce there, and one tiny srun job prints the marker back from the node.
export async function probeSharedDir(req: ProbeRequest): Promise<ProbeAnswer> {
  const nonce = randomBytes(16).toString('hex');
  const marker = join(req.dir, `.runplan-probe-${nonce}`);
  await writeFileAtomic(marker, `${nonce}\n`, { mode: 0o600 });
  try {
    const argv = [
      'srun',
      `--job-name=${req.ownerTag}`,
      `--comment=${req.ownerTag}`,
      `--chdir=/`,
      '--time=1',
      '--ntasks=1',
      '--quiet',
      ...(req.spec.partition !== undefined ? [`--partition=${req.spec.partition}`] : []),
      ...(req.spec.account !== undefined ? [`--account=${req.spec.account}`] : []),
      ...req.spec.extraArgs,
      '--',
      '/bin/sh',
      '-c',
      PROBE_SCRIPT,
      'sh',
      marker,
    ];
    const env = { SLURM_JOB_ID: undefined, SLURM_JOBID: undefined };
    const c = await capture({ argv, input: '', env, deadlineMs: PROBE_DEADLINE_MS, graceMs: 1000, maxBuffer: 1 << 16, signal: req.signal });
    if (c.reason !== 'exited' || c.exitCode !== 0) {
      const said = c.stderr.toString('utf8').trim().split('\n').at(-1) ?? '';
      const problem = said || `srun ${c.reason} ${c.exitCode ?? c.signal ?? ''}`;
      // A probe with no answer proves nothing, also when squeue cannot answer either (the
      // controller is down): that is the warning's problem, never a crash of the run.
      try {
        await endJobs(req.ownerTag, 1000);
      } catch (e) {
        return {
          kind: 'unknown',
          problem: `${problem}; and its job could not be looked for: ${e instanceof Error ? e.message : String(e)}`,
        };
      }
      return { kind: 'unknown', problem };
    }
    const [node = '', held = ''] = c.stdout.toString('utf8').split('\n');
    return held === nonce ? { kind: 'seen', node } : { kind: 'missing', node };
  } finally {
    await rm(marker, { force: true });
  }
}
