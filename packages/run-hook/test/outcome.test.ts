import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Execution, SettleReason, TeardownReport } from '@runplan/settle';
import { hookOutcome } from '../src/run.js';

const none: TeardownReport = { result: 'none', signalled: [], survivors: [], heldPipe: false };
const failedTeardown: TeardownReport = { result: 'failed', signalled: [41, 42], survivors: [42], heldPipe: false };

// A settle execution with the given fields over harmless defaults.
function execution(reason: SettleReason, fields: Partial<Execution> = {}): Execution {
  return {
    reason,
    exitCode: null,
    signal: null,
    pid: 40,
    durationMs: 12,
    graceMs: 5000,
    teardown: none,
    bytesIn: 0,
    bytesOut: 0,
    tag: 't',
    ownership: 'group+tag',
    ...fields,
  };
}

const map = (e: Execution) => hookOutcome(e, ['./check', 'x'], 'out', 'err', 'post_run');

test('only an exit 0 is ok, carrying argv, duration and tails', () => {
  assert.equal(map(execution('exited', { exitCode: 0 })), {
    ok: true,
    reason: 'ok',
    exitCode: 0,
    durationMs: 12,
    stdoutTail: 'out',
    stderrTail: 'err',
    argv: ['./check', 'x'],
  });
  const nonzero = map(execution('exited', { exitCode: 1 }));
  assert.is(nonzero.reason, 'exited');
  assert.is(nonzero.exitCode, 1);
  assert.ok(!nonzero.ok && nonzero.message === 'post_run hook ./check exited 1');
});

test('an exit 0 whose leftovers could not be ended is not ok, and names the survivors', () => {
  const outcome = map(execution('exited', { exitCode: 0, teardown: failedTeardown }));
  assert.is(outcome.ok, false);
  assert.is(outcome.reason, 'exited');
  assert.ok(!outcome.ok && outcome.teardown === failedTeardown);
  assert.ok(!outcome.ok && outcome.message.endsWith('survivors: 42'), outcome.ok ? '' : outcome.message);
});

test('every settle reason maps to a hook reason', () => {
  const cases: [Execution, string][] = [
    [execution('signaled', { signal: 'SIGKILL' }), 'signaled'],
    [execution('timed_out', { deadlineMs: 600_000, teardown: { ...none, result: 'escalated' } }), 'timed_out'],
    [execution('stalled', { stallMs: 1000, teardown: { ...none, result: 'clean' } }), 'timed_out'],
    [execution('spawn_failed', { error: { code: 'ENOENT', message: 'not found', where: 'spawn' } }), 'spawn_failed'],
    [execution('interrupted', { interruptSignal: 'SIGINT' }), 'interrupted'],
  ];
  for (const [e, reason] of cases) assert.is(map(e).reason, reason, e.reason);
  const timedOut = map(cases[1]![0]);
  assert.ok(!timedOut.ok && timedOut.message === 'post_run hook ./check passed its 10m deadline and was torn down (escalated)');
  assert.ok(!timedOut.ok && timedOut.teardown?.result === 'escalated');
  const interrupted = map(cases[4]![0]);
  assert.ok(!interrupted.ok && interrupted.message.endsWith('interrupted by SIGINT'));
  assert.ok(!interrupted.ok && interrupted.teardown === undefined, 'no teardown field when nothing was torn down');
});

test.run();
