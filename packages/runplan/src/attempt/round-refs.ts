import type { DurableRound, RefFailedData, RoundRestoredData } from '../events/types.js';
import { describeGitFailure, git, gitSettled, readRef, succeeded } from '../host/git.js';
import type { Attempt } from './record.js';

// Each finished loop round's tree is a commit on a side ref, so a crash mid-loop keeps the
// rounds' work: refs/runplan/<slug>/rounds/<run-id>/<task>/<attempt>/<round>. They serve a
// resume of that run only: deleted when the task is checkpointed, when the run writes its
// receipt, and (rounds of every other run) when a run of the slug starts or resumes.

// Where the loop rounds of a slug's runs are kept.
function roundsPrefix(slug: string): string {
  return `refs/runplan/${slug}/rounds/`;
}

/** A kept round, or the ref git would not write (journaled as ref-failed by the caller). */
export type KeptRound = { ok: true; ref: string; commit: string } | { ok: false; failure: RefFailedData };

// Makes the round's tree (`tree`, from treeState: what the worktree holds, staged) a commit
// whose parent is the attempt's base, on the round's ref. When git refuses, the round is not
// durable: a crash loses it, and it does not count.
export async function keepRound(a: Attempt, at: { worktree: string; tree: string; baseCommit: string; round: number }): Promise<KeptRound> {
  const { ctx, task } = a;
  const ref = `${roundsPrefix(ctx.plan.slug)}${ctx.runId}/${task.id}/${a.attempt}/${at.round}`;
  const failed = (commit: string | null, message: string): KeptRound => ({
    ok: false,
    failure: { op: 'write', ref, commit, taskId: task.id, message },
  });
  if (!/^[0-9a-f]{40,64}$/.test(at.tree)) return failed(null, `the round's tree could not be read (${at.tree})`);
  const message = `runplan: ${task.id} attempt ${a.attempt} round ${at.round}`;
  const args = ['commit-tree', at.tree, '-p', at.baseCommit, '-m', message];
  const made = await gitSettled(at.worktree, args, a.git);
  if (!succeeded(made)) return failed(null, describeGitFailure(args, made));
  const commit = made.stdout.toString('utf8').trim();
  const updated = await git(at.worktree, ['update-ref', ref, commit]);
  if (updated.code !== 0) return failed(commit, updated.stderr.trim() || `git update-ref exited ${updated.code}`);
  ctx.roundKept(ref);
  return { ok: true, ref, commit };
}

// A resumed loop's start: the crashed attempt's last durable round applied onto the new
// attempt's base (its diff against the old base). Not restored — the worktree left at the
// base — when the ref is gone or moved, or the change does not apply cleanly.
export async function restoreRound(
  a: Attempt,
  worktree: string,
  durable: DurableRound,
): Promise<Omit<RoundRestoredData, 'taskId' | 'attempt'>> {
  const at = `round ${durable.round} of attempt ${durable.attempt} (${durable.ref})`;
  const current = await readRef(worktree, durable.ref);
  if (current !== durable.commit) {
    const why = current === undefined ? 'is gone' : `moved to ${current}`;
    return {
      from: durable,
      restored: false,
      reason: 'ref_missing',
      message: `${at} ${why}: the loop starts over from the base; its rounds do not count`,
    };
  }
  const args = ['cherry-pick', '--no-commit', durable.commit];
  const picked = await gitSettled(worktree, args, a.git);
  if (succeeded(picked)) return { from: durable, restored: true, reason: 'applied', message: `continuing from ${at}` };
  await git(worktree, ['cherry-pick', '--quit']);
  await git(worktree, ['reset', '--hard', '--quiet', 'HEAD']);
  await git(worktree, ['clean', '-fdq']);
  return {
    from: durable,
    restored: false,
    reason: 'conflict',
    message: `${at} does not apply on the new base (${describeGitFailure(args, picked)}): the loop starts over from the base; its rounds do not count`,
  };
}

/** The slug's round refs as git listed them, or why it would not (journaled as ref-failed). */
type Listing = { ok: true; refs: string[] } | { ok: false; failure: RefFailedData };

// The slug's round refs, as for-each-ref lists them (sorted by name).
async function listRounds(repo: string, slug: string): Promise<Listing> {
  const prefix = roundsPrefix(slug);
  const listed = await git(repo, ['for-each-ref', '--format=%(refname)', prefix]);
  if (listed.code !== 0)
    return { ok: false, failure: { op: 'delete', ref: prefix, commit: null, taskId: null, message: listed.stderr.trim() } };
  return { ok: true, refs: listed.stdout.split('\n').filter((ref) => ref !== '') };
}

/**
 * A run's view of its slug's round refs: git is asked once (for-each-ref, the first time a
 * deletion needs them), and the run keeps the list current itself — the rounds its loops
 * keep (keepRound) are added, the refs it deletes dropped. It may: the run holds the slug
 * lock, so nothing else of runplan's writes or deletes them meanwhile. A ref someone else
 * wrote under the prefix meanwhile is missed here and goes when the next run starts.
 */
export class RunRounds {
  #listing: Promise<Listing> | undefined;
  /** Refs this run's loops kept since the listing (a later listing would hold them too: a set). */
  readonly #kept = new Set<string>();
  /** Refs this run deleted: gone from the listing. */
  readonly #deleted = new Set<string>();

  constructor(
    readonly repo: string,
    readonly slug: string,
  ) {}

  // A loop round kept on `ref` (keepRound, after git wrote it).
  kept(ref: string): void {
    this.#kept.add(ref);
    this.#deleted.delete(ref);
  }

  // The slug's round refs now, in for-each-ref's order; a failed listing is asked again next time.
  async #current(): Promise<Listing> {
    this.#listing ??= listRounds(this.repo, this.slug);
    const listing = await this.#listing;
    if (!listing.ok) {
      this.#listing = undefined;
      return listing;
    }
    const refs = new Set([...listing.refs, ...this.#kept]);
    for (const ref of this.#deleted) refs.delete(ref);
    return { ok: true, refs: [...refs].sort() };
  }

  // Deletes the round refs that `which` selects (by run id and task id); returns the refs git
  // would not delete.
  async #delete(which: (runId: string, taskId: string) => boolean): Promise<RefFailedData[]> {
    const prefix = roundsPrefix(this.slug);
    const current = await this.#current();
    if (!current.ok) return [current.failure];
    const failures: RefFailedData[] = [];
    for (const ref of current.refs) {
      const [runId, taskId] = ref.slice(prefix.length).split('/');
      if (runId === undefined || taskId === undefined || !which(runId, taskId)) continue;
      const deleted = await git(this.repo, ['update-ref', '-d', ref]);
      if (deleted.code !== 0) failures.push({ op: 'delete', ref, commit: null, taskId, message: deleted.stderr.trim() });
      else {
        this.#deleted.add(ref);
        this.#kept.delete(ref);
      }
    }
    return failures;
  }

  // Once a task is checkpointed its kept rounds (of every run of the slug) have served.
  deleteTask(taskId: string): Promise<RefFailedData[]> {
    return this.#delete((_, task) => task === taskId);
  }

  // Rounds only a resume of their own run can use: a run's own at its receipt (`only`), every
  // other run's when a run starts or resumes (`except`).
  pruneRuns(runs: { only: string } | { except: string }): Promise<RefFailedData[]> {
    return this.#delete((runId) => ('only' in runs ? runId === runs.only : runId !== runs.except));
  }
}
