// A continuation says what it continues from: when the plan's base moved since the failed
// run it continues, it proceeds on the old base and says so in one line; --new-run starts
// from the new base (real bin).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts } from '@runplan/test-fixtures';
import { mockPlan, ofType, records, runplan, withPlan } from './support.js';

const PLAN = mockPlan({
  slug: 'moved',
  tasks: `[[tasks]]
id = "a"
prompt = """
mock: write out/a.txt a
mock: commit a
"""

[[tasks]]
id = "b"
needs = ["a"]
prompt = """
mock: on-attempt 1 blocked need a decision
mock: write out/b.txt b
mock: commit b
"""
`,
});

async function started(f: Parameters<Parameters<typeof withPlan>[2]>[0]): Promise<Record<string, any>> {
  return ofType(await records(f.repo, 'moved'), 'run-started')[0]!;
}

test(
  'base_moved: a continuation proceeds on the old base and prints one line naming both and --new-run',
  withPlan(PLAN, { timeoutMs: 120_000 }, async (f) => {
    const r1 = await runplan(['run', f.plan], f);
    assert.is(r1.exitCode, 1, r1.stderr);
    const old = f.repo.head('main')!;
    const now = f.repo.commitFiles({ 'later.txt': 'moved\n' });
    const r2 = await runplan(['run', f.plan, '--retry', 'b'], f);
    assert.is(r2.exitCode, 0, r2.stderr);
    const line = `runplan: base_moved: continuing from ${old}; ${now} is the base now — runplan run ${f.plan} --new-run starts from it`;
    assert.ok(r2.stderr.split('\n').includes(line), r2.stderr);
    assert.is((await started(f)).baseCommit, old);
    assert.is(dispatchCounts(f.ledger).get('a'), 1, 'a adopted, not redone');
  }),
);

test(
  '--new-run after a failed run starts from the new base (no continuation, no base_moved line)',
  withPlan(PLAN, { timeoutMs: 120_000 }, async (f) => {
    const r1 = await runplan(['run', f.plan], f);
    assert.is(r1.exitCode, 1, r1.stderr);
    const now = f.repo.commitFiles({ 'later.txt': 'moved\n' });
    const r2 = await runplan(['run', f.plan, '--new-run'], f);
    assert.is(r2.exitCode, 0, r2.stderr);
    assert.not.match(r2.stderr, 'base_moved');
    assert.is((await started(f)).baseCommit, now);
    assert.is(dispatchCounts(f.ledger).get('a'), 2);
  }),
);

test.run();
