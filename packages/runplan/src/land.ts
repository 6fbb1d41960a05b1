import type { Emit } from './context.js';
import type { AttemptFailureData } from './events.js';
import { isAncestor, readRef, updateRef } from './git.js';

export type LandResult = { ok: true; branch: string; already: boolean } | { ok: false; branch: string; failure: AttemptFailureData };

// Fast-forwards the plan's `land` branch to the integration head with a compare-and-swap on
// its old value. Already there counts as landed (a crash between the two is no failure);
// a branch that moved elsewhere is never forced: class integration, reason land_moved.
export async function land(repo: string, branch: string, target: string, emit: Emit): Promise<LandResult> {
  const ref = `refs/heads/${branch}`;
  const current = (await readRef(repo, ref)) ?? null;
  await emit('landing-started', { branch: ref, from: current, to: target });
  if (current === target) {
    await emit('landed', { branch: ref, from: current, to: target, already: true });
    return { ok: true, branch: ref, already: true };
  }
  const moved = (message: string): LandResult => ({
    ok: false,
    branch: ref,
    failure: { class: 'integration', reason: 'land_moved', phase: 'land', message, evidenceTail: '' },
  });
  if (current !== null && (await isAncestor(repo, current, target)) !== true) {
    return moved(`${ref} is at ${current.slice(0, 12)}, which the result ${target.slice(0, 12)} does not contain: someone moved it; nothing was forced`);
  }
  const swapped = await updateRef(repo, ref, target, current);
  if (!swapped.ok) {
    return moved(`${ref} moved to ${swapped.error.actual?.slice(0, 12) ?? 'nothing'} while landing; nothing was forced`);
  }
  await emit('landed', { branch: ref, from: current, to: target, already: false });
  return { ok: true, branch: ref, already: false };
}
