import { roomRefusal } from '../host/disk.js';
import { readJournalFailureNote } from '../host/disk-reserve.js';
import { PLAN_DEFAULTS, type Plan } from '../plan/types.js';
import type { PriorRun } from './inspect.js';
import { withContinuedTrees } from './chain-trees.js';
import { owedAdoptions } from './owed-adoptions.js';
import { recoverRun } from './recover.js';
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
  const adopting = await owedAdoptions(recovered.value, { plan, repo, digests, prior });
  // A resumed continuation still owes the removal of the trees of the runs it continues.
  const withTrees = withContinuedTrees(adopting?.recovered ?? recovered.value, target, prior);
  return {
    ok: true,
    value: {
      mode: 'resume',
      run: target.paths,
      recovered: withTrees,
      scanned: target.scan,
      ...(adopting !== undefined ? { adopting: { origin: adopting.origin, checkpoints: adopting.checkpoints } } : {}),
    },
  };
}
