import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { afterPostRun, afterPreRun } from '../src/decision.js';
import { HOOK_FAILURE_REASONS, RUN_OUTCOMES, type HookFailureReason, type HookOutcome, type RunOutcome } from '../src/outcome.js';

type HookReason = 'ok' | HookFailureReason;

// A hook outcome with the given reason and plausible evidence.
function hook(reason: HookReason): HookOutcome {
  if (reason === 'ok') return { ok: true, reason, exitCode: 0, durationMs: 5, stdoutTail: '', stderrTail: '', argv: ['check'] };
  return {
    ok: false,
    reason,
    exitCode: reason === 'exited' ? 3 : null,
    signal: reason === 'signaled' ? 'SIGKILL' : null,
    durationMs: 5,
    stdoutTail: '',
    stderrTail: 'boom',
    message: `hook ${reason}`,
  };
}

const runReason: Record<RunOutcome, string> = {
  success: 'exited',
  failed: 'gate_failed',
  timed_out: 'timed_out',
  interrupted: 'interrupted',
};

const kept = (outcome: RunOutcome) => ({ outcome, reason: runReason[outcome], demoted: false });
const demoted = { outcome: 'failed', reason: 'post_run_failed', demoted: true } as const;
const interrupted = { outcome: 'interrupted', reason: 'interrupted', demoted: false } as const;

// The whole demotion table, written out row by row rather than derived from the rule.
const table: [RunOutcome, HookReason, { outcome: RunOutcome; reason: string; demoted: boolean }][] = [
  ['success', 'ok', kept('success')],
  ['success', 'exited', demoted],
  ['success', 'signaled', demoted],
  ['success', 'timed_out', demoted],
  ['success', 'spawn_failed', demoted],
  ['success', 'template_refused', demoted],
  ['success', 'interrupted', interrupted],
  ['failed', 'ok', kept('failed')],
  ['failed', 'exited', kept('failed')],
  ['failed', 'signaled', kept('failed')],
  ['failed', 'timed_out', kept('failed')],
  ['failed', 'spawn_failed', kept('failed')],
  ['failed', 'template_refused', kept('failed')],
  ['failed', 'interrupted', interrupted],
  ['timed_out', 'ok', kept('timed_out')],
  ['timed_out', 'exited', kept('timed_out')],
  ['timed_out', 'signaled', kept('timed_out')],
  ['timed_out', 'timed_out', kept('timed_out')],
  ['timed_out', 'spawn_failed', kept('timed_out')],
  ['timed_out', 'template_refused', kept('timed_out')],
  ['timed_out', 'interrupted', interrupted],
  ['interrupted', 'ok', kept('interrupted')],
  ['interrupted', 'exited', kept('interrupted')],
  ['interrupted', 'signaled', kept('interrupted')],
  ['interrupted', 'timed_out', kept('interrupted')],
  ['interrupted', 'spawn_failed', kept('interrupted')],
  ['interrupted', 'template_refused', kept('interrupted')],
  ['interrupted', 'interrupted', interrupted],
];

test('the demotion table covers every run outcome × every hook outcome', () => {
  const reasons: HookReason[] = ['ok', ...HOOK_FAILURE_REASONS];
  for (const run of RUN_OUTCOMES) {
    for (const reason of reasons) {
      const rows = table.filter(([r, h]) => r === run && h === reason);
      assert.is(rows.length, 1, `${run} × ${reason} appears once`);
    }
  }
  assert.is(table.length, RUN_OUTCOMES.length * reasons.length);
});

for (const [run, reason, expected] of table) {
  test(`post_run: a ${run} run with a hook that is ${reason}`, () => {
    assert.equal(afterPostRun({ outcome: run, reason: runReason[run] }, hook(reason)), expected);
  });
}

test('post_run can never promote a failed run', () => {
  for (const reason of ['ok', ...HOOK_FAILURE_REASONS] as HookReason[]) {
    for (const run of ['failed', 'timed_out'] as const) {
      assert.is.not(afterPostRun({ outcome: run, reason: runReason[run] }, hook(reason)).outcome, 'success');
    }
  }
});

test('a post_run timeout demotes a success', () => {
  assert.equal(afterPostRun({ outcome: 'success', reason: 'exited' }, hook('timed_out')), {
    outcome: 'failed',
    reason: 'post_run_failed',
    demoted: true,
  });
});

test('pre_run: ok proceeds, interrupted interrupts, every other outcome fails the attempt', () => {
  assert.equal(afterPreRun(hook('ok')), { proceed: true });
  assert.equal(afterPreRun(hook('interrupted')), { proceed: false, outcome: 'interrupted', reason: 'interrupted' });
  for (const reason of ['exited', 'signaled', 'timed_out', 'spawn_failed', 'template_refused'] as const) {
    assert.equal(afterPreRun(hook(reason)), { proceed: false, outcome: 'failed', reason: 'pre_run_failed' }, reason);
  }
});

test.run();
