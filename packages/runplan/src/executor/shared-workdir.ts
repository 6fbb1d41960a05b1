import { mkdir } from 'node:fs/promises';
import type { Refusal } from '../resume/refusal.js';
import { probeSharedDir } from './slurm/probe.js';
import { commandExecutor, gatesExecutor, type ExecutorSpec, type SlurmExecutorSpec } from './spec.js';

/** What checking the workdir found: a refusal (a node cannot see it), and lines for people. */
export interface WorkdirCheck {
  refusal?: Refusal;
  notices: string[];
}

// Before a run's first submission: can a node of each Slurm executor the plan uses see the
// directory the attempts' worktrees are made in (README "Slurm")? One probe job per distinct
// executor and run, never per attempt. A node that cannot is a refusal (exit 3,
// executor_workdir_not_shared); a probe that gets no answer is a notice, and the run goes on.
export async function checkSharedWorkdir(
  plan: { tasks: readonly { executor?: ExecutorSpec; gatesExecutor?: ExecutorSpec }[] },
  where: { dir: string; tagPrefix: string; signal?: AbortSignal },
): Promise<WorkdirCheck> {
  const specs = slurmSpecs(plan);
  const notices: string[] = [];
  if (specs.length === 0) return { notices };
  await mkdir(where.dir, { recursive: true, mode: 0o700 });
  for (const spec of specs) {
    const answer = await probeSharedDir({ spec, dir: where.dir, ownerTag: `${where.tagPrefix}probe`, signal: where.signal });
    const partition = spec.partition !== undefined ? `partition ${spec.partition}` : 'the default partition';
    if (answer.kind === 'missing') {
      return {
        notices,
        refusal: {
          reason: 'executor_workdir_not_shared',
          message: `node ${answer.node} of ${partition} cannot see ${where.dir}, where the attempts' worktrees are made; no task was dispatched`,
          hint: 'set `workdir` in the plan to a directory on a file system the nodes share (NFS, Lustre, …) with this host',
        },
      };
    }
    if (answer.kind === 'unknown') {
      notices.push(
        `runplan: warning: executor_probe_failed: ${partition}: could not check that its nodes see ${where.dir}: ${answer.problem}`,
      );
    }
  }
  return { notices };
}

// The distinct Slurm executors of the plan's commands and gates.
function slurmSpecs(plan: { tasks: readonly { executor?: ExecutorSpec; gatesExecutor?: ExecutorSpec }[] }): SlurmExecutorSpec[] {
  const seen = new Map<string, SlurmExecutorSpec>();
  for (const task of plan.tasks) {
    for (const spec of [commandExecutor(task), gatesExecutor(task)]) {
      if (spec.kind === 'slurm') seen.set(JSON.stringify([spec.partition, spec.account, spec.extraArgs]), spec);
    }
  }
  return [...seen.values()];
}
