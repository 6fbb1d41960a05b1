import { describeGitFailure, git, gitSettled, headWithParents, isAncestor, succeeded } from '../host/git.js';
import { fail, interruptedCheck, objectsFault } from './failure.js';
import type { Attempt } from './record.js';

// Commits what the task left in its tree (it may also have committed itself) and checks
// that something changed. Returns the attempt's own result commit (undefined: no change).
export async function commitResult(a: Attempt, tree: string, baseCommit: string): Promise<string | undefined> {
  const add = await gitSettled(tree, ['add', '-A'], a.git);
  interruptedCheck(a, add.reason);
  if (!succeeded(add))
    throw (await objectsFault(a, add)) ?? fail('environment', 'commit_failed', 'commit', describeGitFailure(['add', '-A'], add));
  const staged = await git(tree, ['diff', '--cached', '--quiet']);
  if (staged.code === 1) {
    const message = `runplan: ${a.task.id} (run ${a.ctx.runId}, attempt ${a.attempt})`;
    const commit = await gitSettled(tree, ['commit', '--quiet', '-m', message], a.git);
    interruptedCheck(a, commit.reason);
    if (!succeeded(commit))
      throw (
        (await objectsFault(a, commit)) ??
        fail('task', 'commit_failed', 'commit', describeGitFailure(['commit'], commit), commit.stderr.toString('utf8'))
      );
  } else if (staged.code !== 0) {
    throw fail('environment', 'commit_failed', 'commit', `git diff --cached: ${staged.stderr}`);
  }
  // HEAD and its parents in one process: the usual result (one commit on top of the base)
  // has the base as a parent, which proves the ancestry; anything else asks merge-base.
  const resolved = await headWithParents(tree);
  if (resolved === undefined) throw fail('task', 'commit_failed', 'commit', 'the worktree has no HEAD commit');
  const { head, parents } = resolved;
  if (head === baseCommit) {
    if (a.task.expect === 'none') return undefined;
    throw fail('task', 'zero_diff', 'commit', `task ${a.task.id} changed nothing (expect = "commit")`);
  }
  if (!parents.includes(baseCommit) && (await isAncestor(tree, baseCommit, head)) !== true) {
    throw fail(
      'task',
      'history_rewritten',
      'commit',
      `the task's HEAD ${head.slice(0, 12)} does not descend from its base ${baseCommit.slice(0, 12)}`,
    );
  }
  return head;
}
