// `--keep-going` / `keep_going = true` through the real bin: a task that stops for good no
// longer stops independent tasks; nothing downstream of a failure is dispatched.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts } from '@runplan/test-fixtures';
import { type Fixture, records, runplan, withPlan } from './support.js';

// jobs = 1 and plan order put both failures first: without keep-going nothing else runs.
function plan(slug: string, top = ''): string {
  const task = (id: string, lines: string[], needs?: string[]) =>
    [
      '[[tasks]]',
      `id = "${id}"`,
      ...(needs ? [`needs = ${JSON.stringify(needs)}`] : []),
      `prompt = """\n${lines.map((l) => `mock: ${l}`).join('\n')}\n"""`,
      '',
    ].join('\n');
  return [
    `slug = "${slug}"`,
    'base = "main"',
    'jobs = 1',
    top,
    '',
    '[defaults]',
    'command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]',
    'format = "claude-stream-json"',
    'deadline = "5m"',
    'grace = "2s"',
    '',
    task('bad', ['blocked need a database']),
    task('worse', ['blocked need a key']),
    task('after', ['write out/after.txt after', 'commit after'], ['bad']),
    task('later', ['write out/later.txt later', 'commit later'], ['after']),
    task('one', ['write out/one.txt one', 'commit one']),
    task('two', ['write out/two.txt two', 'commit two']),
  ].join('\n');
}

async function receipt(f: Fixture, slug: string): Promise<{ type: string; data: Record<string, any> }> {
  const terminal = (await records(f.repo, slug)).filter((r) => r.terminal === true);
  assert.is(terminal.length, 1);
  return { type: terminal[0]!.type, data: terminal[0]!.data as Record<string, any> };
}

async function checkpointed(f: Fixture, slug: string): Promise<string[]> {
  return (await records(f.repo, slug)).filter((r) => r.type === 'checkpoint').map((r) => (r.data as { taskId: string }).taskId);
}

// Both ways of asking for it end the same way.
for (const [how, top, flags] of [
  ['--keep-going', '', ['--keep-going']],
  ['keep_going = true', 'keep_going = true', []],
] as const) {
  test(
    `${how}: failing tasks stop only what is downstream of them; independent ones checkpoint; the receipt lists every failure`,
    withPlan(plan('keep', top), { timeoutMs: 120_000 }, async (f) => {
      const r = await runplan(['run', f.plan, ...flags], f);
      assert.is(r.exitCode, 1, r.stderr);
      const counts = dispatchCounts(f.ledger);
      assert.equal([...counts.keys()].sort(), ['bad', 'one', 'two', 'worse'], 'after (downstream of bad) never dispatched');
      assert.equal((await checkpointed(f, 'keep')).sort(), ['one', 'two']);
      assert.is(f.repo.fileAt('runplan/keep', 'out/one.txt'), 'one\n');
      assert.is(f.repo.fileAt('runplan/keep', 'out/two.txt'), 'two\n');
      const { type, data } = await receipt(f, 'keep');
      assert.is(type, 'run-failed');
      assert.equal([data.task, data.class, data.reason], ['bad', 'needs_human', 'blocked'], 'the first failure is the run’s');
      assert.equal(data.failed, [
        { task: 'bad', class: 'needs_human', reason: 'blocked', phase: 'command' },
        { task: 'worse', class: 'needs_human', reason: 'blocked', phase: 'command' },
      ]);
      assert.equal(
        data.notDispatched,
        [
          { task: 'after', because: 'bad' },
          { task: 'later', because: 'bad' },
        ],
        'the receipt names what was never dispatched',
      );
      assert.match(r.stderr, /^ {2}not dispatched: after \(needs bad\), later \(needs bad\)$/m);
    }),
  );
}

test(
  'without keep-going the first failure stops all dispatch',
  withPlan(plan('stop'), { timeoutMs: 120_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    assert.equal([...dispatchCounts(f.ledger).keys()], ['bad']);
    const { data } = await receipt(f, 'stop');
    assert.is(data.failed, undefined);
  }),
);

test(
  'keep-going: a budget stop still stops all dispatch',
  withPlan(`${plan('budget')}\n[budget]\nmax_tokens = 50\n`, { timeoutMs: 120_000 }, async (f) => {
    const r = await runplan(['run', f.plan, '--keep-going'], f);
    assert.is(r.exitCode, 1, r.stderr);
    assert.equal([...dispatchCounts(f.ledger).keys()], ['bad'], 'the budget was spent by the first attempt');
    const { data } = await receipt(f, 'budget');
    assert.is(data.class, 'budget');
  }),
);

test(
  'keep_going must be a boolean (exit 2)',
  withPlan(plan('bad-key', 'keep_going = "yes"'), { timeoutMs: 30_000 }, async (f) => {
    const r = await runplan(['validate', f.plan], f);
    assert.is(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /wrong_type: .*: keep_going: must be a boolean/);
  }),
);

test.run();
