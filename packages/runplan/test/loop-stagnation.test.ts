// Improve-verify loops through the real bin: a changed tree is progress; stagnation is a round
// that changed nothing, a tree an earlier round already verified, or the same verify output
// for `stagnation_rounds` consecutive rounds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger } from '@runplan/test-fixtures';
import { type Fixture, ofType, records, runplan, withPlan } from './support.js';

// A one-task loop plan: the agent runs DIRECTIVES each round, then `until` runs.
function loopPlan(slug: string, o: { directives: string[]; until: string[]; rounds: number; extra?: string; defaults?: string }): string {
  return [
    `slug = "${slug}"`,
    'base = "main"',
    '',
    '[defaults]',
    'command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]',
    'format = "claude-stream-json"',
    'deadline = "5m"',
    'grace = "2s"',
    o.defaults ?? '',
    '',
    '[[tasks]]',
    'id = "improve"',
    `prompt = """\n${o.directives.map((d) => `mock: ${d}`).join('\n')}\n"""`,
    `until = ${JSON.stringify(o.until)}`,
    `rounds = ${o.rounds}`,
    o.extra ?? '',
    '',
  ].join('\n');
}

async function roundsOf(f: Fixture, slug: string): Promise<Array<[number, string, string | null]>> {
  return ofType(await records(f.repo, slug), 'round-done').map((d) => [d.round, d.action, d.reason]);
}

async function receiptData(f: Fixture, slug: string): Promise<Record<string, any>> {
  const terminal = (await records(f.repo, slug)).filter((r) => r.terminal === true);
  assert.is(terminal.length, 1);
  return terminal[0]!.data as Record<string, any>;
}

test(
  'a coarse verify (the same failure line each round) does not stop a loop that changes files: green in round 3',
  withPlan(
    loopPlan('coarse', { directives: ['until-file rounds.txt 3'], until: ['mock-verify-coarse', 'rounds.txt', '3'], rounds: 5 }),
    { timeoutMs: 90_000 },
    async (f) => {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.equal(await roundsOf(f, 'coarse'), [
        [1, 'next_round', null],
        [2, 'next_round', null],
        [3, 'done', null],
      ]);
      assert.is(f.repo.fileAt('runplan/coarse', 'rounds.txt'), 'round 1\nround 2\nround 3\n');
    },
  ),
);

test(
  'a silent verify (grep -q: no output at all) does not stop a loop that changes files: green in round 3',
  withPlan(
    loopPlan('silent', { directives: ['until-file rounds.txt 3'], until: ['grep', '-qx', 'round 3', 'rounds.txt'], rounds: 5 }),
    { timeoutMs: 90_000 },
    async (f) => {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.equal(
        (await roundsOf(f, 'silent')).map(([round, action]) => [round, action]),
        [
          [1, 'next_round'],
          [2, 'next_round'],
          [3, 'done'],
        ],
      );
    },
  ),
);

test(
  'no_change: a round that changes nothing is stagnation (exit 1)',
  withPlan('stagnate', { timeoutMs: 90_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    const data = await receiptData(f, 'stagnate');
    assert.equal([data.class, data.reason], ['stagnation', 'no_change']);
    assert.equal(await roundsOf(f, 'stagnate'), [
      [1, 'next_round', null],
      [2, 'stop', 'no_change'],
    ]);
  }),
);

test(
  'tree_cycle: a round whose tree an earlier round already verified is stagnation (exit 1)',
  withPlan(
    loopPlan('cycle', {
      directives: ['flip state.txt red blue'],
      until: ['mock-verify', 'state.txt', '2'],
      rounds: 10,
      extra: 'stagnation_rounds = 5',
    }),
    { timeoutMs: 90_000 },
    async (f) => {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const data = await receiptData(f, 'cycle');
      assert.equal([data.class, data.reason], ['stagnation', 'tree_cycle']);
      assert.equal(await roundsOf(f, 'cycle'), [
        [1, 'next_round', null],
        [2, 'next_round', null],
        [3, 'stop', 'tree_cycle'],
      ]);
      assert.is(readLedger(f.ledger).length, 3);
    },
  ),
);

test(
  'repeated_verify: the same verify output for stagnation_rounds rounds on changing trees is stagnation (exit 1; [defaults] sets it)',
  withPlan(
    loopPlan('repeat', {
      directives: ['until-file rounds.txt 9'],
      until: ['mock-verify-coarse', 'rounds.txt', '9'],
      rounds: 10,
      defaults: 'stagnation_rounds = 2',
    }),
    { timeoutMs: 90_000 },
    async (f) => {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const data = await receiptData(f, 'repeat');
      assert.equal([data.class, data.reason], ['stagnation', 'repeated_verify']);
      assert.equal(await roundsOf(f, 'repeat'), [
        [1, 'next_round', null],
        [2, 'stop', 'repeated_verify'],
      ]);
    },
  ),
);

test(
  'repeated_verify: stagnation_rounds defaults to 3',
  withPlan(
    loopPlan('repeat3', {
      directives: ['until-file rounds.txt 9'],
      until: ['mock-verify-coarse', 'rounds.txt', '9'],
      rounds: 10,
    }),
    { timeoutMs: 90_000 },
    async (f) => {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      assert.equal((await roundsOf(f, 'repeat3')).at(-1), [3, 'stop', 'repeated_verify']);
    },
  ),
);

test(
  'stagnation_rounds below 2 is an invalid plan (exit 2, its key path named)',
  withPlan(
    loopPlan('tiny', {
      directives: ['until-file rounds.txt 3'],
      until: ['mock-verify', 'rounds.txt', '3'],
      rounds: 5,
      extra: 'stagnation_rounds = 1',
    }),
    { timeoutMs: 30_000 },
    async (f) => {
      const r = await runplan(['validate', f.plan], f);
      assert.is(r.exitCode, 2, r.stderr);
      assert.match(r.stderr, /tasks\[0\]\.stagnation_rounds/);
    },
  ),
);

test.run();
