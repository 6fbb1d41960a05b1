// A complete, unchanged plan is up to date: `runplan run` exits 0 and dispatches nothing
// while the task contracts are unchanged and the base resolves to the run's base or its
// result (also after it landed); a moved base, a changed contract or --new-run starts a
// new run (real bin).
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger } from '@runplan/test-fixtures';
import { records, runIds, runplan, withPlan } from './support.js';

async function result(f: Parameters<Parameters<typeof withPlan>[2]>[0], slug: string): Promise<{ runId: string; commit: string }> {
  const terminal = (await records(f.repo, slug)).filter((r) => r.terminal === true);
  assert.is(terminal[0]?.type, 'run-complete');
  const d = terminal[0]!.data as { logicalRunId: string; resultCommit: string };
  return { runId: d.logicalRunId, commit: d.resultCommit };
}

test(
  'after complete: up to date (exit 0, nothing dispatched, no new run); jobs changed still up to date; --new-run, a changed contract and a moved base each start a new run',
  withPlan('single', { timeoutMs: 180_000 }, async (f) => {
    const r1 = await runplan(['run', f.plan], f);
    assert.is(r1.exitCode, 0, r1.stderr);
    const done = await result(f, 'single');

    writeFileSync(f.plan, `${readFileSync(f.plan, 'utf8').replace('base = "main"', 'base = "main"\njobs = 4')}`);
    const again = await runplan(['run', f.plan], f);
    assert.is(again.exitCode, 0, again.stderr);
    assert.match(again.stderr, `runplan: up to date: run ${done.runId}, ${done.commit}`);
    assert.is(readLedger(f.ledger).length, 1, 'nothing dispatched');
    assert.is(runIds(f.repo, 'single').length, 1, 'no new run');

    const forced = await runplan(['run', f.plan, '--new-run'], f);
    assert.is(forced.exitCode, 0, forced.stderr);
    assert.is(readLedger(f.ledger).length, 2, '--new-run dispatches');
    assert.is(runIds(f.repo, 'single').length, 2);

    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace('Write the greeting.', 'Write the greeting, politely.'));
    const changed = await runplan(['run', f.plan], f);
    assert.is(changed.exitCode, 0, changed.stderr);
    assert.is(readLedger(f.ledger).length, 3, 'a changed contract runs again');

    f.repo.commitFiles({ 'later.txt': 'moved\n' });
    const moved = await runplan(['run', f.plan], f);
    assert.is(moved.exitCode, 0, moved.stderr);
    assert.is(readLedger(f.ledger).length, 4, 'a moved base runs again');
    const last = await runplan(['run', f.plan], f);
    assert.is(last.exitCode, 0, last.stderr);
    assert.match(last.stderr, 'runplan: up to date: run ');
    assert.is(readLedger(f.ledger).length, 4);
  }),
);

test(
  'base = land = "main": after it landed the plan is up to date (the base resolves to the result)',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace('base = "main"', 'base = "main"\nland = "main"'));
    const r1 = await runplan(['run', f.plan], f);
    assert.is(r1.exitCode, 0, r1.stderr);
    const done = await result(f, 'single');
    assert.is(f.repo.head('main'), done.commit, 'landed');
    const again = await runplan(['run', f.plan], f);
    assert.is(again.exitCode, 0, again.stderr);
    assert.match(again.stderr, `runplan: up to date: run ${done.runId}, ${done.commit}`);
    assert.is(readLedger(f.ledger).length, 1);
  }),
);

test.run();
