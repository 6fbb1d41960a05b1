// A task that failed and was then checkpointed in the same coordinator: its failed attempts'
// worktrees go with the checkpoint (worktrees-removed), so a complete run leaves none.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ofType, records, runplan, withPlan } from './support.js';

test(
  'fail-once without a crash: the failed attempt 1 worktree is removed once attempt 2 is checkpointed; git worktree list holds none of the run',
  withPlan('fail-once', {}, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const trees = f.repo
      .git(['worktree', 'list', '--porcelain'])
      .split('\n')
      .filter((l) => l.startsWith('worktree ') && l !== `worktree ${f.repo.path}`);
    assert.equal(trees, [], 'no worktree of the run after complete');
    const rs = await records(f.repo, 'fail-once');
    const removed = ofType(rs, 'worktrees-removed');
    assert.is(removed.length, 1);
    assert.is(removed[0]!.taskId, 'flaky');
    assert.match(removed[0]!.worktrees[0], /\.flaky\.1\/tree$/);
  }),
);

test.run();
