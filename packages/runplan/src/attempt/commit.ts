import { err, ok } from '@runplan/common';
import { maskSecrets } from '../plan/secrets.js';
import { textTail } from '../host/evidence.js';
import { describeGitFailure, git, gitSettled, headWithParents, isAncestor, succeeded } from '../host/git.js';
import { fail, interruption, objectsFault, type StepResult } from './failure.js';
import type { Attempt } from './record.js';

// Commits what the task left in its tree (it may also have committed itself) and checks
// that something changed. Returns the attempt's own result commit (undefined: no change).
// git refusing the commit for anything but the disk is commit_failed, class task: setup
// already proved git works, so what fails here is what the task left in its tree (a
// locked index, an embedded repository, a broken HEAD); the retry's prompt carries git's stderr.
export async function commitResult(a: Attempt, tree: string, baseCommit: string): Promise<StepResult<string | undefined>> {
  const add = await gitSettled(tree, ['add', '-A'], a.git);
  const stopped = interruption(a, add.reason);
  if (stopped !== undefined) return err(stopped);
  if (!succeeded(add))
    return err(
      (await objectsFault(a, add)) ??
        fail('commit_failed', 'commit', describeGitFailure(['add', '-A'], add), gitEvidence(a, add.stderr.toString('utf8'))),
    );
  const staged = await git(tree, ['diff', '--cached', '--quiet']);
  if (staged.code === 1) {
    const message = `runplan: ${a.task.id} (run ${a.ctx.runId}, attempt ${a.attempt})`;
    const commit = await gitSettled(tree, ['commit', '--quiet', '-m', message], a.git);
    const stopped = interruption(a, commit.reason);
    if (stopped !== undefined) return err(stopped);
    if (!succeeded(commit))
      return err(
        (await objectsFault(a, commit)) ??
          fail('commit_failed', 'commit', describeGitFailure(['commit'], commit), gitEvidence(a, commit.stderr.toString('utf8'))),
      );
  } else if (staged.code !== 0) {
    return err(fail('commit_failed', 'commit', `git diff --cached: ${staged.stderr}`, gitEvidence(a, staged.stderr)));
  }
  // HEAD and its parents in one process: the usual result (one commit on top of the base)
  // has the base as a parent, which proves the ancestry; anything else asks merge-base.
  const resolved = await headWithParents(tree);
  if (resolved === undefined) return err(fail('commit_failed', 'commit', 'the worktree has no HEAD commit'));
  const { head, parents } = resolved;
  if (head === baseCommit) {
    if (a.task.expect === 'none') return ok(undefined);
    return err(fail('zero_diff', 'commit', `task ${a.task.id} changed nothing (expect = "commit")`));
  }
  if (!parents.includes(baseCommit) && (await isAncestor(tree, baseCommit, head)) !== true) {
    const message = `the task's HEAD ${head.slice(0, 12)} does not descend from its base ${baseCommit.slice(0, 12)}`;
    return err(fail('history_rewritten', 'commit', message));
  }
  return ok(head);
}

// What git said, as a failure's evidence: masked and bounded.
function gitEvidence(a: Attempt, stderr: string): string {
  return maskSecrets(textTail(stderr), a.ctx.secrets);
}
