// A crash mid-loop keeps the rounds' work: each finished round's tree is a commit on a side
// ref named in round-done; a resumed loop continues from the last one (through the real bin).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger } from '@runplan/test-fixtures';
import { ofType, records, runplan, withPlan } from './support.js';

const PLAN = `slug = "crash-loop"
base = "main"

[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
deadline = "5m"
grace = "2s"

[[tasks]]
id = "improve"
prompt = """
mock: until-file rounds.txt 3
"""
until = ["mock-verify", "rounds.txt", "3"]
rounds = 3
`;

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
    },
  ),
);

test.run();
