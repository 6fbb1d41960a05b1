import { git, isAncestor, readRef } from '../host/git.js';
import type { Refusal } from '../resume/refusal.js';
import { checkedOutIn } from './land.js';

// `land` checked before any work: a land branch that is already off the integration line
// (`line`: the run's base, or a resumed run's integration head), or checked out with
// uncommitted changes to tracked files, would fail only after every task ran. After
// dispatch the same findings stay class integration (land.ts). A land branch that does not
// exist yet is created when the run lands: allowed (a new branch for the result), and said
// before any work (`notice`), as `land = "mian"` for main would create it.
export async function landPrecheck(
  repo: string,
  branch: string,
  line: string,
  planFile: string,
): Promise<{ refusal?: Refusal; notice?: string }> {
  const ref = `refs/heads/${branch}`;
  const current = await readRef(repo, ref);
  if (current === undefined) {
    return {
      notice: `runplan: land_new_branch: ${ref} does not exist: landing creates it (check land in ${planFile} if you meant an existing branch)`,
    };
  }
  const refusal = await landCheck(repo, ref, branch, current, line, planFile);
  return refusal !== undefined ? { refusal } : {};
}

async function landCheck(
  repo: string,
  ref: string,
  branch: string,
  current: string,
  line: string,
  planFile: string,
): Promise<Refusal | undefined> {
  if (current !== line && (await isAncestor(repo, current, line)) !== true) {
    return {
      reason: 'land_moved',
      message: `${ref} is at ${current.slice(0, 12)}, which the integration line from ${line.slice(0, 12)} does not contain: the result could not land there; nothing was started`,
      hint: `bring ${branch} back onto that line, or point land in ${planFile} at another branch`,
    };
  }
  const worktree = await checkedOutIn(repo, ref);
  if (worktree === undefined) return undefined;
  const dirty = await git(worktree, ['status', '--porcelain', '--untracked-files=no']);
  if (dirty.code === 0 && dirty.stdout.trim() === '') return undefined;
  return {
    reason: 'land_checked_out',
    message: `${ref} is checked out in ${worktree} with uncommitted changes; nothing was started`,
    hint: `commit or stash them in ${worktree}, then run the same command again`,
  };
}
