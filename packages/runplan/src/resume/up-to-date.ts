import { taskListDigest } from '../plan/digest.js';
import type { Plan } from '../plan/types.js';
import type { PriorRun } from './inspect.js';

/** The complete run a plan is up to date with: nothing to dispatch. */
export interface UpToDate {
  runId: string;
  resultCommit: string;
  journal: string;
}

// A complete run whose task contracts (ids, needs, contract digests: taskListDigest) are the
// plan's and whose base commit or result — the landed commit, for `base = land` — is what the
// plan's base resolves to now. Keys outside the contracts (jobs, deadlines, budget) do not
// matter. A journal from before run-started carried `tasksDigest` never counts as up to date.
export function upToDate(last: PriorRun | undefined, plan: Plan, digests: Map<string, string>, baseCommit: string): UpToDate | undefined {
  if (last === undefined || last.kind !== 'complete') return undefined;
  const started = last.journal.started;
  const receipt = last.journal.completeReceipt;
  if (started === undefined || receipt === undefined || started.tasksDigest === undefined) return undefined;
  if (started.tasksDigest !== taskListDigest(plan, digests)) return undefined;
  if (baseCommit !== started.baseCommit && baseCommit !== receipt.resultCommit) return undefined;
  return { runId: last.paths.runId, resultCommit: receipt.resultCommit, journal: last.paths.journal };
}
