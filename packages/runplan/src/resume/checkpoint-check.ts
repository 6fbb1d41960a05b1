import type { Plan } from '../plan/types.js';
import { checkpointId } from '../attempt/integrate.js';
import type { CheckpointData } from '../events/types.js';
import type { Refusal } from './refusal.js';

/** What a checkpoint is checked against: the plan, and the chain of valid checkpoints before it. */
export interface ChainCheck {
  plan: Plan;
  byTask: Map<string, Plan['tasks'][number]>;
  /** The plan's task contract digests. */
  digests: Map<string, string>;
  /** The valid checkpoint id of each task so far. */
  ids: Map<string, string>;
  /** The previous valid result (the run's base commit for the first checkpoint). */
  head: string;
  /** Commits the repository does not have. */
  missing: Set<string>;
  descends: (ancestor: string, descendant: string) => Promise<boolean | undefined>;
  /** Checkpoint ids already recomputed (checkpointId), by checkpoint; any other is recomputed here. */
  recomputed?: ReadonlyMap<CheckpointData, string>;
}

// Why a checkpoint cannot be trusted (undefined: it can). A checkpoint is valid when its id
// is the sha256 of its key fields, its task is in the plan with the same contract digest,
// its dependency ids are the checkpoints of its needs, its base is the previous
// checkpoint's result (the run's base commit for the first), both commits exist, and the
// result descends from the base.
export async function checkpointProblem(
  cp: CheckpointData,
  { plan, byTask, digests, ids, head, missing, descends, recomputed: known }: ChainCheck,
): Promise<Refusal | undefined> {
  // A record whose fields are not what a checkpoint holds (its checksums intact) is refused
  // as such: an id that was not a string made the id check below throw (internal_error, exit 1).
  const malformed = (['id', 'taskId', 'taskContractDigest', 'baseCommit', 'resultCommit'] as const).find(
    (key) => typeof cp[key] !== 'string',
  );
  if (malformed !== undefined || !Array.isArray(cp.dependencyCheckpointIds))
    return {
      reason: 'checkpoint_invalid',
      message: `a checkpoint record is malformed: its ${malformed ?? 'dependencyCheckpointIds'} is ${JSON.stringify(cp[malformed ?? 'dependencyCheckpointIds']) ?? 'missing'}`,
    };
  const recomputed = known?.get(cp) ?? checkpointId(cp);
  if (recomputed !== cp.id)
    return {
      reason: 'checkpoint_invalid',
      message: `the checkpoint of task ${cp.taskId} does not match its id (${cp.id.slice(0, 12)} vs ${recomputed.slice(0, 12)})`,
    };
  const task = byTask.get(cp.taskId);
  if (task === undefined)
    return {
      reason: 'task_removed',
      message: `completed task ${cp.taskId} is no longer in ${plan.file}`,
      hint: 'restore the task in the plan, or start over with --fresh',
    };
  if (ids.has(cp.taskId)) return { reason: 'checkpoint_invalid', message: `task ${cp.taskId} has two checkpoints` };
  const digest = digests.get(cp.taskId)!;
  if (digest !== cp.taskContractDigest) {
    return {
      reason: 'contract_changed',
      message: `completed task ${cp.taskId} changed its contract: journaled ${cp.taskContractDigest.slice(0, 16)}, plan now ${digest.slice(0, 16)}`,
      hint: `restore ${plan.file} as it was, or start over: runplan run ${plan.file} --fresh`,
    };
  }
  const expectedDeps = task.needs.map((n) => ids.get(n));
  if (expectedDeps.some((d) => d === undefined) || JSON.stringify(expectedDeps) !== JSON.stringify(cp.dependencyCheckpointIds)) {
    return {
      reason: 'dependency_mismatch',
      message: `the checkpoint of task ${cp.taskId} names dependency checkpoints that are not the valid checkpoints of its needs (${task.needs.join(', ')})`,
    };
  }
  if (cp.baseCommit !== head) {
    return {
      reason: 'not_descendant',
      message: `the checkpoint of task ${cp.taskId} builds on ${cp.baseCommit.slice(0, 12)}, not on the previous result ${head.slice(0, 12)}`,
    };
  }
  for (const sha of [cp.baseCommit, cp.resultCommit]) {
    if (missing.has(sha))
      return { reason: 'commit_missing', message: `commit ${sha} of task ${cp.taskId}'s checkpoint is missing from the repository` };
  }
  if (cp.resultCommit !== cp.baseCommit && (await descends(cp.baseCommit, cp.resultCommit)) !== true) {
    return {
      reason: 'not_descendant',
      message: `the result ${cp.resultCommit.slice(0, 12)} of task ${cp.taskId} does not descend from its predecessor ${cp.baseCommit.slice(0, 12)}`,
    };
  }
  return undefined;
}
