// A task that failed and was then checkpointed in the same coordinator: its failed attempts'
// worktrees go with the checkpoint (worktrees-removed), so a complete run leaves none.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ofType, records, runplan, withPlan, type Fixture } from './support.js';

// The worktrees git has registered besides the repository's own.
function extraTrees(f: Fixture): string[] {
  return f.repo
    .git(['worktree', 'list', '--porcelain'])
    .split('\n')
    .filter((l) => l.startsWith('worktree ') && l !== `worktree ${f.repo.path}`);
}

test(
  'fail-once without a crash: the failed attempt 1 worktree is removed once attempt 2 is checkpointed; git worktree list holds none of the run',
  withPlan('fail-once', {}, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal(extraTrees(f), [], 'no worktree of the run after complete');
    const rs = await records(f.repo, 'fail-once');
    const removed = ofType(rs, 'worktrees-removed');
    assert.is(removed.length, 1);
    assert.is(removed[0]!.taskId, 'flaky');
    assert.match(removed[0]!.worktrees[0], /\.flaky\.1\/tree$/);
  }),
);

test(
  'killed between a checkpoint and its attempt-closed, then runplan stop: the continuation removes that attempt worktree; none is left after complete',
  withPlan('chain', {}, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:checkpoint:a' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    assert.is(extraTrees(f).length, 1, "a's worktree is still there after the crash");
    const stop = await runplan(['stop', 'chain'], f);
    assert.is(stop.exitCode, 0, stop.stderr);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal(extraTrees(f), [], 'no worktree of either run after complete');
    const removed = ofType(await records(f.repo, 'chain'), 'worktrees-removed');
    assert.equal(
      removed.map((d) => d.taskId),
      ['a'],
    );
  }),
);

test.run();
