// `runplan stop` of a live coordinator that exits without writing its receipt (here its
// journal refuses an append as the attempt is torn down, as a full disk would: exit 5). stop must not print
// an earlier run's receipt as if it were this one's: it says the coordinator exited without
// one and deals with the run as after a crash, through the same path a second `stop` takes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin, waitUntil } from '@runplan/test-fixtures';
import { alive, ofType, records, runIds, RUNPLAN, runplan, waitForEvent, withPlan } from './support.js';

const HOLD = { MOCK_HOLD: 'only', MOCK_HOLD_SECONDS: '120' };

test(
  'the coordinator exits 5 with no receipt: stop names that, not the slug’s earlier receipt, and closes the run as after a crash',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const done = await runplan(['run', f.plan], f);
    assert.is(done.exitCode, 0, done.stderr);
    const [earlier] = runIds(f.repo, 'single');
    const env = { ...f.env, ...HOLD, RUNPLAN_FAILPOINT: 'journal-error:command-settled' };
    const running = runBin(RUNPLAN, ['run', f.plan, '--new-run'], { env, timeoutMs: 110_000 });
    await waitUntil('the second run started', () => runIds(f.repo, 'single').length === 2, { timeoutMs: 30_000 });
    await waitForEvent(f.repo, 'single', 'attempt-started');
    const stop = await runplan(['stop', 'single', '--wait', '60s'], f);
    const coordinator = await running;
    assert.is(coordinator.exitCode, 5, coordinator.stderr);
    const later = runIds(f.repo, 'single').find((id) => id !== earlier)!;
    assert.match(stop.stderr, /^runplan: stopped: pid \d+ exited without a receipt/m);
    assert.not.match(stop.stdout, new RegExp(earlier!), 'the earlier run’s receipt is not printed as this one’s');
    // The run it left is closed as after a crash: its receipt is on stdout, journaled in its own journal.
    assert.is(stop.exitCode, 0, stop.stderr);
    assert.match(stop.stderr, new RegExp(`runplan: stopped_after_crash: run ${later}: `));
    const receipt = JSON.parse(stop.stdout.trim()) as { type: string; data: { reason: string } };
    assert.is(receipt.type, 'run-failed');
    assert.is(receipt.data.reason, 'stopped_after_crash');
    const rs = await records(f.repo, 'single');
    assert.is(ofType(rs, 'run-failed').length, 1, 'the later run has its receipt now');
    for (const { pid } of readLedger(f.ledger)) assert.not.ok(alive(pid), `agent ${pid} is gone`);
  }),
);

test.run();
