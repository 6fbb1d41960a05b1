import type { DurableRound } from '../events/types.js';
import { git, gitSettled, readRef, succeeded } from '../host/git.js';
import type { Attempt } from './record.js';

// Each finished loop round's tree is a commit on a side ref, so a crash mid-loop keeps the
// rounds' work: refs/runplan/<slug>/rounds/<run-id>/<task>/<attempt>/<round>.

// Where the loop rounds of a slug's runs are kept.
function roundsPrefix(slug: string): string {
  return `refs/runplan/${slug}/rounds/`;
}

// Makes the round's tree (`tree`, from treeState: what the worktree holds, staged) a commit
// whose parent is the attempt's base, on the round's ref. Undefined when git refused (the
// round is then not durable: a crash loses it, and it does not count).
export async function keepRound(
  a: Attempt,
  at: { worktree: string; tree: string; baseCommit: string; round: number },
): Promise<{ ref: string; commit: string } | undefined> {
  const { ctx, task } = a;
  if (!/^[0-9a-f]{40,64}$/.test(at.tree)) return undefined;
  const message = `runplan: ${task.id} attempt ${a.attempt} round ${at.round}`;
  const made = await gitSettled(at.worktree, ['commit-tree', at.tree, '-p', at.baseCommit, '-m', message], a.git);
  if (!succeeded(made)) return undefined;
  const commit = made.stdout.toString('utf8').trim();
  const ref = `${roundsPrefix(ctx.plan.slug)}${ctx.runId}/${task.id}/${a.attempt}/${at.round}`;
  const updated = await git(at.worktree, ['update-ref', ref, commit]);
  return updated.code === 0 ? { ref, commit } : undefined;
}

// A resumed loop's start: the crashed attempt's last durable round applied onto the new
// attempt's base (its diff against the old base). False — the worktree left at the base —
// when the ref is gone or moved, or the change does not apply cleanly.
export async function restoreRound(a: Attempt, worktree: string, durable: DurableRound): Promise<boolean> {
  if ((await readRef(worktree, durable.ref)) !== durable.commit) return false;
  const picked = await gitSettled(worktree, ['cherry-pick', '--no-commit', durable.commit], a.git);
  if (succeeded(picked)) return true;
  await git(worktree, ['cherry-pick', '--quit']);
  await git(worktree, ['reset', '--hard', '--quiet', 'HEAD']);
  await git(worktree, ['clean', '-fdq']);
  return false;
}

// Once a task is checkpointed its kept rounds (of every run of the slug) have served.
export async function deleteRoundRefs(repo: string, slug: string, taskId: string): Promise<void> {
  const prefix = roundsPrefix(slug);
  const listed = await git(repo, ['for-each-ref', '--format=%(refname)', prefix]);
  if (listed.code !== 0) return;
  for (const ref of listed.stdout.split('\n')) {
    if (ref.slice(prefix.length).split('/')[1] === taskId) await git(repo, ['update-ref', '-d', ref]);
  }
}
