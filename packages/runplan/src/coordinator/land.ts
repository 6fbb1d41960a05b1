import type { Emit } from './context.js';
import type { AttemptFailureData } from '../events/types.js';
import { describeGitFailure, git, gitSettled, isAncestor, readRef, succeeded, updateRef, type GitRunContext } from '../host/git.js';

export type LandResult = { ok: true; branch: string; already: boolean } | { ok: false; branch: string; failure: AttemptFailureData };

// Fast-forwards the plan's `land` branch to the integration head with a compare-and-swap on
// its old value. Already there counts as landed (a crash between the two is no failure);
// a branch that moved elsewhere is never forced: class integration, reason land_moved.
//
// A land branch checked out in a worktree (`main` in the operator's own checkout) is moved
// by `git merge --ff-only` in that worktree, so its files and index follow; a worktree with
// changes to tracked files is not touched (reason land_checked_out, nothing forced).
export async function land(repo: string, branch: string, target: string, emit: Emit, gitCtx: GitRunContext): Promise<LandResult> {
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
    return moved(
      `${ref} is at ${current.slice(0, 12)}, which the result ${target.slice(0, 12)} does not contain: someone moved it; nothing was forced`,
    );
  }
  const worktree = await checkedOutIn(repo, ref);
  if (worktree !== undefined) {
    const dirty = await git(worktree, ['status', '--porcelain', '--untracked-files=no']);
    if (dirty.code !== 0 || dirty.stdout.trim() !== '') {
      return {
        ok: false,
        branch: ref,
        failure: {
          class: 'integration',
          reason: 'land_checked_out',
          phase: 'land',
          message: `${ref} is checked out in ${worktree} with uncommitted changes; nothing was forced`,
          evidenceTail: dirty.stdout,
        },
      };
    }
    const merged = await gitSettled(worktree, ['merge', '--ff-only', '--quiet', '--end-of-options', target], gitCtx);
    if (!succeeded(merged) || (await readRef(repo, ref)) !== target) {
      return moved(
        `fast-forwarding ${ref} in ${worktree} failed: ${describeGitFailure(['merge', '--ff-only'], merged)}; nothing was forced`,
      );
    }
    await emit('landed', { branch: ref, from: current, to: target, already: false });
    return { ok: true, branch: ref, already: false };
  }
  const swapped = await updateRef(repo, ref, target, current);
  if (!swapped.ok) {
    return moved(`${ref} moved to ${swapped.error.actual?.slice(0, 12) ?? 'nothing'} while landing; nothing was forced`);
  }
  await emit('landed', { branch: ref, from: current, to: target, already: false });
  return { ok: true, branch: ref, already: false };
}

// The worktree that has `ref` checked out, if any.
export async function checkedOutIn(repo: string, ref: string): Promise<string | undefined> {
  const list = await git(repo, ['worktree', 'list', '--porcelain']);
  let path: string | undefined;
  for (const line of list.stdout.split('\n')) {
    if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
    else if (line === `branch ${ref}` && path !== undefined) return path;
  }
  return undefined;
}
