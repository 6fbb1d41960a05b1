import { join } from 'node:path';
import { err, ok } from '@runplan/common';
import { primeCgroupJoin } from '@runplan/settle';
import { createDataDir, createRunDir } from '@runplan/workdir';
import { ensurePrivateDir } from '../host/state.js';
import { describeGitFailure, git, gitSettled, succeeded } from '../host/git.js';
import { fail, interruption, type StepResult, toolFault, writing } from './failure.js';
import type { Attempt } from './record.js';

/** Where the attempt works: its worktree and the variables every later step renders with. */
export interface Workspace {
  tree: string;
  vars: Record<string, string | number | undefined>;
}

// The evidence dir, the attempt dir (marked, 0700) holding the worktree (`git worktree add
// --detach` at the base) and the datadir; the template variables that name them.
export async function setUpWorkspace(
  a: Attempt,
  baseVars: Record<string, string | number>,
  baseCommit: string,
): Promise<StepResult<Workspace>> {
  const { ctx, task } = a;
  // `git worktree add` below is this attempt's first spawn into a cgroup of its own
  // (keepJoinWarm).
  keepJoinWarm();
  const evidenceDir = await writing(a, a.evidenceDir, () => ensurePrivateDir(a.evidenceDir));
  if (!evidenceDir.ok) return evidenceDir;

  const dir = await createRunDir(ctx.workdirTemplate, baseVars);
  if (!dir.ok)
    return err(
      toolFault(a, dir.error.message, dir.error.path ?? '') ?? fail('workdir_failed', 'setup', `${dir.error.reason}: ${dir.error.message}`),
    );
  const tree = join(dir.value.path, 'tree');
  // The data dir (its mark and four fsyncs) is made while git checks the tree out: they are
  // different entries of the attempt dir, and neither needs the other. Its outcome counts only
  // once the tree is there, as when it came after it; a rejection is handled where it is awaited.
  const dataDir = createDataDir(dir.value.path, ctx.runId);
  dataDir.catch(() => {});
  const addTree = () =>
    ctx.worktrees.exclusive(() =>
      gitSettled(ctx.repo, ['worktree', 'add', '--detach', '--quiet', '--end-of-options', tree, baseCommit], a.git),
    );
  let added = await addTree();
  // Another process (a second slug's coordinator, an operator) may race on .git/worktrees:
  // that failure names a directory it could not create; one more try settles it.
  if (!succeeded(added) && added.reason === 'exited' && /could not create directory/.test(added.stderr.toString('utf8')))
    added = await addTree();
  const stopped = interruption(a, added.reason);
  if (stopped !== undefined || !succeeded(added)) await dataDir.then(undefined, () => {});
  if (stopped !== undefined) return err(stopped);
  if (!succeeded(added))
    return err(
      toolFault(a, added.stderr.toString('utf8'), tree) ?? fail('worktree_failed', 'setup', describeGitFailure(['worktree', 'add'], added)),
    );
  a.rec.worktree = tree;
  const data = await dataDir;
  if (!data.ok)
    return err(
      toolFault(a, data.error.message, data.error.path ?? dir.value.path) ??
        fail('datadir_failed', 'setup', `${data.error.reason}: ${data.error.message}`),
    );

  const vars = {
    ...baseVars,
    model: task.model,
    'harness.workdir': tree,
    'package.dir': ctx.repo,
    'run.datadir': data.value.path,
  };
  return ok({ tree, vars });
}

// The content of a worktree as one hash (untracked files included), to tell whether a round changed anything.
export async function treeState(tree: string): Promise<string> {
  await git(tree, ['add', '-A']);
  const out = await git(tree, ['write-tree']);
  return out.code === 0 ? out.stdout : `unknown-${Date.now()}`;
}

/**
 * Keeps the kernel's cgroup move lock warm between one attempt's last spawn into a cgroup of
 * its own (`git commit`) and the next one's first (`git worktree add`). On a kernel whose
 * cgroup2 is mounted without `favordynmods`, the first such join after ~one RCU grace period
 * of quiet waits for a new one (5–15 ms here, on the main thread: most of what a trivial task
 * cost beyond the shell). settle's `primeCgroupJoin` makes a no-op move off the main thread;
 * while the lock is warm it takes ~0.1 ms and keeps it warm one grace period longer. Called at
 * each step of that turnaround (integrate, worktree removal, the next setup), which are a few
 * milliseconds apart (bench/RESULTS.md, "Eleventh round"). Whatever the plan's `ownership`:
 * runplan's settled git commands always take a cgroup when one can be made.
 */
export function keepJoinWarm(): void {
  primeCgroupJoin();
}

// Removes a finished attempt's worktree (its result is checkpointed); failed ones stay as evidence.
export async function removeWorktree(a: Attempt): Promise<void> {
  if (a.rec.worktree === undefined) return;
  keepJoinWarm();
  const tree = a.rec.worktree;
  await a.ctx.worktrees.exclusive(() => git(a.ctx.repo, ['worktree', 'remove', '--force', '--end-of-options', tree]));
}
