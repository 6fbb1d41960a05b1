import type { Plan } from '../plan/types.js';
import type { RunJournal } from '../events/sink.js';
import type { RefFailedData } from '../events/types.js';
import { newRunOwnerTag } from '../resume/leftovers.js';
import { diskFailure, diskFaultInText } from '../host/disk.js';
import { land } from './land.js';
import { keepResult } from './result-ref.js';
import type { StopCause } from './types.js';

/** What landing a successful run's result needs from its coordinator. */
export interface Landing {
  repo: string;
  plan: Plan;
  runId: string;
  /** The integration branch's head: the result. */
  head: string;
  /** Where the result is when it cannot be kept on its own ref (the integration branch). */
  branchRef: string;
  journal: RunJournal;
  signal: AbortSignal;
  gitIdentity: Record<string, string>;
  refsFailed: (failures: RefFailedData[]) => Promise<void>;
}

// Moves plan.land to the run's result at the end of a successful run: the branch landed, or
// the failure the run ends with instead. A land that moved under the run keeps the result
// reachable, so the next run continues and lands without redoing a task.
export async function landResult(l: Landing): Promise<{ landed: string } | { stop: StopCause }> {
  const target = l.plan.land!;
  const result = await land(l.repo, target, l.head, l.journal.emit, {
    ownerTag: newRunOwnerTag(l.runId),
    signal: l.signal,
    env: l.gitIdentity,
  });
  if (result.ok) return { landed: result.branch };
  const fault = diskFaultInText(result.failure.message, l.repo);
  if (fault !== undefined) {
    l.journal.diskFailed(fault);
    return { stop: { failure: diskFailure(fault, 'land'), task: null, evidence: [] } };
  }
  if (result.failure.reason !== 'land_moved') return { stop: { failure: result.failure, task: null, evidence: [] } };
  const unkept = await keepResult(l.repo, l.plan.slug, l.runId, l.head);
  if (unkept !== undefined) await l.refsFailed([unkept]);
  const where = unkept === undefined ? `refs/runplan/${l.plan.slug}/runs/${l.runId}` : l.branchRef;
  const message = `${result.failure.message}. The result ${l.head.slice(0, 12)} is kept at ${where}: merge it into ${target} yourself, or bring ${target} back onto it and run \`runplan run ${l.plan.file}\` (it continues, redoing no task, and lands)`;
  return { stop: { failure: { ...result.failure, message }, task: null, evidence: [] } };
}
