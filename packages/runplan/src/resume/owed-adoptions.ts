import type { CheckpointData } from '../events/types.js';
import type { Plan } from '../plan/types.js';
import type { PriorRun } from './inspect.js';
import { recoverRun, type RecoveredRun } from './recover.js';

/** A run's recovery with the adoptions it still owed, and those adoptions. */
export interface Owed {
  recovered: RecoveredRun;
  origin: string;
  checkpoints: CheckpointData[];
}

// A continuation adopts its origin's still-valid checkpoints right after its run-started,
// before any dispatch. One whose coordinator died before every checkpoint-adopted was durable
// (no attempt started yet) still owes the rest, whether it is resumed or, once `runplan stop`
// closed it, continued in turn: they are recovered again from its origin, as the continuation
// did (and from the origin's own origin when that one owed some too), so none of those tasks
// is dispatched again. The checkpoints it did adopt must be the start of that chain; else
// nothing is owed. `recovered` then holds the whole chain and the head after it.
export async function owedAdoptions(
  recovered: RecoveredRun,
  at: { plan: Plan; repo: string; digests: Map<string, string>; prior: readonly PriorRun[] },
  seen: ReadonlySet<string> = new Set(),
): Promise<Owed | undefined> {
  const origin = recovered.started.continues;
  if (origin === null || origin === undefined || recovered.attemptsTotal > 0 || seen.has(origin)) return undefined;
  const run = at.prior.find((p) => p.paths.runId === origin);
  if (run === undefined) return undefined;
  const from = await recoverRun(run, { plan: at.plan, repo: at.repo, mode: 'continue', digests: at.digests });
  if (!from.ok) return undefined;
  const whole = (await owedAdoptions(from.value, at, new Set([...seen, origin])))?.recovered ?? from.value;
  const done = recovered.checkpoints;
  const chain = whole.checkpoints;
  if (chain.length <= done.length || done.some((cp, i) => cp.id !== chain[i]!.id)) return undefined;
  return { recovered: { ...recovered, checkpoints: chain, head: whole.head }, origin, checkpoints: chain.slice(done.length) };
}
