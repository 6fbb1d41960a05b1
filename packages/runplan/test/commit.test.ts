import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mockPlan, ofType, records, runplan, withPlan } from './support.js';

// The commit step proves "the result descends from the attempt's base". The usual result is
// one commit on the base (its parent, from the same rev-list that reads HEAD); these cover the
// other shapes, where merge-base has to answer.

const CHAIN = mockPlan({
  slug: 'chain',
  top: ['jobs = 1'],
  tasks: `[[tasks]]
id = "twice"
prompt = """
mock: write out/one.txt one
mock: commit first
mock: write out/two.txt two
mock: commit second
"""

[[tasks]]
id = "leftover"
needs = ["twice"]
prompt = """
mock: write out/three.txt three
mock: commit third
mock: write out/four.txt four
"""
`,
});

test(
  'results more than one commit above the base land: the agent committed twice; the agent committed and left changes for runplan to commit',
  withPlan(CHAIN, { timeoutMs: 90_000 }, async (f) => {
    const base = f.repo.head('main')!;
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const branch = 'runplan/chain';
    assert.is(
      f.repo.git(['rev-list', '--count', `${base}..${branch}`]),
      '4',
      'two agent commits, then one agent commit + one runplan commit',
    );
    for (const file of ['one', 'two', 'three', 'four']) assert.is(f.repo.fileAt(branch, `out/${file}.txt`), `${file}\n`);
    const rs = await records(f.repo, 'chain');
    assert.equal(
      ofType(rs, 'integrated').map((d) => d.mode),
      ['fast_forward', 'fast_forward'],
    );
    const [twice, leftover] = ofType(rs, 'checkpoint');
    assert.is(twice!.baseCommit, base);
    assert.is(leftover!.baseCommit, twice!.resultCommit);
    assert.is(f.repo.head(branch), leftover!.resultCommit);
    assert.match(f.repo.git(['log', '-1', '--format=%s', branch]), /^runplan: leftover /);
  }),
);

const ORPHAN = `slug = "orphan"
base = "main"
jobs = 1

[defaults]
command = ["sh", "-c", "cat >/dev/null && git checkout -q --orphan rewritten-$0 && git commit -q --allow-empty -m orphan", "{{run.attempt}}"]
format = "text"
deadline = "1m"
grace = "2s"

[[tasks]]
id = "rewrite"
`;

test(
  'a result that does not descend from its base (an orphan HEAD) fails: class task, history_rewritten, the branch untouched',
  withPlan(ORPHAN, { timeoutMs: 90_000 }, async (f) => {
    const base = f.repo.head('main')!;
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    const rs = await records(f.repo, 'orphan');
    const closed = ofType(rs, 'attempt-closed');
    assert.ok(closed.length >= 1);
    for (const c of closed) {
      assert.is(c.reason, 'history_rewritten');
      assert.is(c.class, 'task');
      assert.is(c.phase, 'commit');
    }
    assert.is(ofType(rs, 'checkpoint').length, 0);
    assert.is(f.repo.head('runplan/orphan'), base);
  }),
);

// The task itself moves the integration branch (to its own commit) before runplan does.
const MOVED = `slug = "moved"
base = "main"
jobs = 1

[defaults]
command = ["sh", "-c", "cat >/dev/null && echo x > moved.txt && git add -A && git commit -q -m mine && git update-ref refs/heads/runplan/moved HEAD"]
format = "text"
deadline = "1m"
grace = "2s"

[[tasks]]
id = "mover"
`;

test(
  'an integration branch someone else moved fails the attempt: class integration, branch_moved, never retried',
  withPlan(MOVED, { timeoutMs: 90_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    const rs = await records(f.repo, 'moved');
    const closed = ofType(rs, 'attempt-closed');
    assert.equal(
      closed.map((c) => [c.reason, c.class, c.phase]),
      [['branch_moved', 'integration', 'integrate']],
    );
    const decided = ofType(rs, 'repair-decided');
    assert.equal(
      decided.map((d) => [d.action, d.stopReason]),
      [['stop', 'not_retryable']],
    );
    assert.equal(
      ofType(rs, 'run-failed').map((d) => [d.reason, d.class]),
      [['branch_moved', 'integration']],
    );
  }),
);

// The task leaves its worktree's index locked: runplan's own `git add -A` fails (no disk fault).
const LOCKED = `slug = "locked"
base = "main"
jobs = 1

[defaults]
command = ["sh", "-c", "cat >/dev/null && echo x > locked.txt && touch \\"$(git rev-parse --git-dir)/index.lock\\""]
format = "text"
deadline = "1m"
grace = "2s"

[[tasks]]
id = "locker"
`;

test(
  "a commit git refuses for what the task left is class task, commit_failed, retried with git's stderr as evidence",
  withPlan(LOCKED, { timeoutMs: 90_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    const rs = await records(f.repo, 'locked');
    const closed = ofType(rs, 'attempt-closed');
    assert.ok(closed.length >= 2, 'retried');
    for (const c of closed) {
      assert.equal([c.reason, c.class, c.phase], ['commit_failed', 'task', 'commit']);
      assert.match(c.failure.evidenceTail, /index\.lock/);
    }
    assert.is(ofType(rs, 'repair-decided')[0]!.action, 'retry');
    assert.equal(
      ofType(rs, 'run-failed').map((d) => d.class),
      ['task'],
    );
  }),
);

test.run();
