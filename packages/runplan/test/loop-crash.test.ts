// A crash mid-loop keeps the rounds' work: each finished round's tree is a commit on a side
// ref named in round-done; a resumed loop continues from the last one (through the real bin).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLedger, runBin, tempDir, waitUntil } from '@runplan/test-fixtures';
import { loopPlan, loopTask, mockPlan, ofType, RUNPLAN, records, runplan, withPlan } from './support.js';

const PLAN = loopPlan('crash-loop');

const ROUND_REFS = 'refs/runplan/crash-loop/rounds/';

test(
  'kill -9 after round 1, resume: the loop continues from round 1’s tree and completes within rounds = 3; the round refs go once checkpointed',
  withPlan(PLAN, { timeoutMs: 120_000, env: { RUNPLAN_FAILPOINT: 'kill-after:round-done:improve' } }, async (f) => {
    const crashed = await runplan(['run', f.plan], f);
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [first] = ofType(await records(f.repo, 'crash-loop'), 'round-done');
    assert.match(String(first!.roundRef), /^refs\/runplan\/crash-loop\/rounds\/[^/]+\/improve\/1\/1$/);
    assert.is(f.repo.git(['for-each-ref', '--format=%(refname)', ROUND_REFS]), first!.roundRef);
    assert.is(f.repo.git(['rev-parse', first!.roundRef]), first!.roundCommit);
    assert.is(f.repo.fileAt(first!.roundRef, 'rounds.txt'), 'round 1\n', 'round 1’s tree is durable');

    const r = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: '' } });
    assert.is(r.exitCode, 0, r.stderr);
    const rounds = ofType(await records(f.repo, 'crash-loop'), 'round-done');
    assert.equal(
      rounds.map((d) => [d.attempt, d.round, d.action]),
      [
        [1, 1, 'next_round'],
        [2, 2, 'next_round'],
        [2, 3, 'done'],
      ],
    );
    assert.is(readLedger(f.ledger).length, 3);
    assert.is(f.repo.fileAt('runplan/crash-loop', 'rounds.txt'), 'round 1\nround 2\nround 3\n');
    assert.is(f.repo.git(['for-each-ref', '--format=%(refname)', ROUND_REFS]), '', 'deleted when the task is checkpointed');
  }),
);

test(
  'a lost round ref: the resumed loop starts over from the base, and the lost rounds do not count',
  withPlan(
    PLAN.replace('rounds = 3', 'rounds = 4'),
    { timeoutMs: 120_000, env: { RUNPLAN_FAILPOINT: 'kill-after:round-done:improve' } },
    async (f) => {
      const crashed = await runplan(['run', f.plan], f);
      assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
      const [first] = ofType(await records(f.repo, 'crash-loop'), 'round-done');
      f.repo.git(['update-ref', '-d', String(first!.roundRef)]);
      const r = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: '' } });
      assert.is(r.exitCode, 0, r.stderr);
      const rounds = ofType(await records(f.repo, 'crash-loop'), 'round-done');
      assert.equal(
        rounds.map((d) => [d.attempt, d.round]),
        [
          [1, 1],
          [2, 1],
          [2, 2],
          [2, 3],
        ],
      );
      const [restored] = ofType(await records(f.repo, 'crash-loop'), 'round-restored');
      assert.equal([restored!.attempt, restored!.restored, restored!.reason], [2, false, 'ref_missing']);
      assert.match(
        r.stderr,
        /round-restored improve #2: round 1 of attempt 1 \(refs\/runplan\/crash-loop\/rounds\/.*\) is gone: the loop starts over/,
      );
    },
  ),
);

// `other` (jobs = 2) puts its own rounds.txt on the integration line while improve's round 1
// is held, then improve is killed after round 1: round 1's change cannot apply on the new base.
const CONFLICT = mockPlan({
  slug: 'conflict-loop',
  top: ['jobs = 2'],
  tasks: `${loopTask(2)}
[[tasks]]
id = "other"
prompt = """
mock: write rounds.txt other
mock: commit other
"""
`,
});

test(
  'a durable round that conflicts on the new base: the resumed loop starts over from the base (journaled round-restored conflict), the lost round does not count',
  withPlan(CONFLICT, { timeoutMs: 120_000 }, async (f) => {
    const hold = tempDir('runplan-hold-');
    try {
      const holdFile = join(hold.path, 'hold');
      writeFileSync(holdFile, '');
      const env = { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:round-done:improve', MOCK_HOLD: 'improve:1', MOCK_HOLD_FILE: holdFile };
      const running = runBin(RUNPLAN, ['run', f.plan], { env, cwd: f.repo.path, timeoutMs: 100_000 });
      await waitUntil(
        'other is checkpointed',
        async () => {
          try {
            return ofType(await records(f.repo, 'conflict-loop'), 'checkpoint').some((c) => c.taskId === 'other');
          } catch {
            return false;
          }
        },
        { timeoutMs: 60_000 },
      );
      rmSync(holdFile);
      const crashed = await running;
      assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
      assert.is(f.repo.fileAt('runplan/conflict-loop', 'rounds.txt'), 'other\n');

      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      const rs = await records(f.repo, 'conflict-loop');
      const [restored] = ofType(rs, 'round-restored');
      assert.equal([restored!.taskId, restored!.attempt, restored!.restored, restored!.reason], ['improve', 2, false, 'conflict']);
      assert.equal([restored!.from.attempt, restored!.from.round], [1, 1]);
      assert.match(
        String(restored!.message),
        /does not apply on the new base .*: the loop starts over from the base; its rounds do not count/,
      );
      assert.match(r.stderr, /round-restored improve #2: round 1 of attempt 1 .* does not apply on the new base/);
      assert.equal(
        ofType(rs, 'round-done').map((d) => [d.attempt, d.round, d.action]),
        [
          [1, 1, 'next_round'],
          [2, 1, 'next_round'],
          [2, 2, 'done'],
        ],
        'rounds = 2 still allows two rounds on the new base',
      );
      assert.is(f.repo.fileAt('runplan/conflict-loop', 'rounds.txt'), 'other\nround 2\nround 3\n');
    } finally {
      hold.cleanup();
    }
  }),
);

test.run();
