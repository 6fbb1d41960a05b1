import { roomRefusal } from '../host/disk.js';
import { readJournalFailureNote } from '../host/disk-reserve.js';
import type { CheckpointData } from '../events/types.js';
import { PLAN_DEFAULTS, type Plan } from '../plan/types.js';
import type { PriorRun } from './inspect.js';
import { withContinuedTrees } from './chain-trees.js';
import { recoverRun, type RecoveredRun } from './recover.js';
import type { Decided } from './start.js';

// Resumes the slug's incomplete run `target`: refused while the disk that stopped it is still
// short, or when its journal does not recover (recover.ts).
export async function resumeStart(
  target: PriorRun,
  plan: Plan,
  repo: string,
  digests: Map<string, string>,
  prior: readonly PriorRun[] = [],
): Promise<Decided> {
  // A coordinator that exited 5 because its journal's disk was full: the same check as after disk_full.
  const note = await readJournalFailureNote(target.paths.dir, target.journal.coordinator);
  if (note?.reason === 'disk_full') {
    const full = await roomRefusal(
      note.path,
      plan.minFree ?? PLAN_DEFAULTS.minFree,
      `run ${target.paths.runId} stopped (exit 5) for lack of space writing ${note.path}`,
      plan.file,
    );
    if (full !== undefined) return { ok: false, end: { kind: 'refused', ...full } };
  }
  const recovered = await recoverRun(target, { plan, repo, mode: 'resume', digests });
  if (!recovered.ok) return { ok: false, end: { kind: 'refused', ...recovered.error } };
  const adopting = await unadopted(recovered.value, { plan, repo, digests, prior });
  // A resumed continuation still owes the removal of the trees of the runs it continues.
  const withTrees = withContinuedTrees(adopting?.recovered ?? recovered.value, target, prior);
  return {
    ok: true,
    value: {
      mode: 'resume',
      run: target.paths,
      recovered: withTrees,
      scanned: target.scan,
      ...(adopting !== undefined ? { adopting: adopting.adopting } : {}),
    },
  };
}

// A continuation adopts its origin's still-valid checkpoints right after its run-started,
// before any dispatch. One whose coordinator died before every checkpoint-adopted was durable
// (no attempt started yet) still owes the rest: recovered again from the origin, as the
// continuation did, and journaled by the resume (coordinator.ts), so none of those tasks is
// dispatched again. The checkpoints it did adopt must be the start of the origin's chain.
async function unadopted(
  recovered: RecoveredRun,
  at: { plan: Plan; repo: string; digests: Map<string, string>; prior: readonly PriorRun[] },
): Promise<{ recovered: RecoveredRun; adopting: { origin: string; checkpoints: CheckpointData[] } } | undefined> {
  const origin = recovered.started.continues;
  if (origin === null || origin === undefined || recovered.attemptsTotal > 0) return undefined;
  const run = at.prior.find((p) => p.paths.runId === origin);
  if (run === undefined) return undefined;
  const from = await recoverRun(run, { plan: at.plan, repo: at.repo, mode: 'continue', digests: at.digests });
  if (!from.ok) return undefined;
  const done = recovered.checkpoints;
  const chain = from.value.checkpoints;
  if (chain.length <= done.length || done.some((cp, i) => cp.id !== chain[i]!.id)) return undefined;
  const rest = chain.slice(done.length);
  return {
    recovered: { ...recovered, checkpoints: chain, head: from.value.head },
    adopting: { origin, checkpoints: rest },
  };
}
