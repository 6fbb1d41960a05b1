// The receipt itself refused by the journal (journal-error:run-complete): exit 5, no receipt,
// the run left incomplete; the same command then writes it without dispatching anything again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts } from '@runplan/test-fixtures';
import { records, runplan, withPlan } from './support.js';

test(
  'journal-error:run-complete: exit 5 and no receipt; the resume completes with no dispatch',
  withPlan('chain', {}, async (f) => {
    const failed = await runplan(['run', f.plan, '--json'], { env: { ...f.env, RUNPLAN_FAILPOINT: 'journal-error:run-complete' } });
    assert.is(failed.exitCode, 5, failed.stderr);
    assert.match(failed.stderr, /journal_failed: fail point journal-error:run-complete/);
    assert.not.match(failed.stdout, /"type":"run-(complete|failed)"/);
    assert.ok(!(await records(f.repo, 'chain')).some((r) => r.type === 'run-complete' || r.type === 'run-failed'));
    const status = JSON.parse((await runplan(['status', '--json'], f)).stdout) as { state: string };
    assert.is(status.state, 'degraded');
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal([dispatchCounts(f.ledger).get('a'), dispatchCounts(f.ledger).get('b')], [1, 1]);
    assert.is((await records(f.repo, 'chain')).at(-1)!.type, 'run-complete');
  }),
);

test.run();
