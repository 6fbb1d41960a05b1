import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ScheduleEnd } from '../src/coordinator/scheduler.js';
import type { StopCause } from '../src/coordinator/types.js';
import { failureOf } from '../src/events/failure.js';
import type { FailureReason } from '../src/events/reasons.js';
import { verdict, type VerdictInputs } from '../src/coordinator/verdict.js';

// The coordinator's finish() below the bin: which end the run takes once dispatching
// stopped, when several reasons to stop hold at once.

const stop = (reason: FailureReason, task: string | null = 't'): StopCause => ({
  failure: failureOf(reason, 'gates', reason),
  task,
  evidence: [`${task}.log`],
});

const clean: VerdictInputs = { journalFailed: false, diskFault: undefined, interrupted: undefined };
const everything: ScheduleEnd = {
  failure: stop('gate_failed'),
  waiting: ['w'],
  survivors: { task: 's', pids: [9] },
  keptGoing: [],
  notDispatched: [],
};
const disk = { errno: 'ENOSPC', path: '/full' } as const;

test('a journal failure comes before everything: no receipt', () => {
  assert.equal(verdict(everything, { journalFailed: true, diskFault: disk, interrupted: { reason: 'SIGINT' } }), {
    kind: 'journal_failed',
  });
});

test('a disk failure comes before an interruption; the scheduler-stopped disk failure keeps its task', () => {
  const v = verdict(everything, { ...clean, diskFault: disk, interrupted: { reason: 'SIGINT' } });
  assert.is(v.kind, 'failed');
  if (v.kind !== 'failed') return;
  assert.is(v.stop.failure.reason, 'disk_full');
  assert.is(v.stop.task, null);
  assert.equal(v.stop.failure.detail, { errno: 'ENOSPC', path: '/full' });
  const own = stop('disk_full', 'd');
  assert.equal(verdict({ ...everything, failure: own }, { ...clean, diskFault: disk }), { kind: 'failed', stop: own });
});

test('an interruption names the signal, keeps the failure task, phase and evidence, and that task’s own failure as the first', () => {
  const v = verdict(everything, { ...clean, interrupted: { reason: 'SIGTERM' } });
  assert.equal(v, {
    kind: 'failed',
    stop: {
      failure: { class: 'interrupted', reason: 'interrupted', phase: 'gates', message: 'interrupted by SIGTERM', evidenceTail: '' },
      task: 't',
      evidence: ['t.log'],
      firstFailure: { task: 't', class: 'gate', reason: 'gate_failed', phase: 'gates' },
    },
  });
  // The stop the scheduler recorded was itself the interruption: no first failure.
  const stopped = verdict({ ...everything, failure: stop('interrupted', 'h') }, { ...clean, interrupted: { reason: 'SIGINT' } });
  assert.equal(stopped.kind === 'failed' && [stopped.stop.task, stopped.stop.firstFailure], ['h', undefined]);
  const bare = verdict(
    { failure: undefined, waiting: [], survivors: undefined, keptGoing: [], notDispatched: [] },
    { ...clean, interrupted: { reason: 'SIGINT' } },
  );
  assert.equal(bare.kind === 'failed' && [bare.stop.task, bare.stop.failure.phase], [null, 'run']);
});

test('then the failure that stopped dispatching, then unschedulable tasks, then survivors, then landing', () => {
  assert.equal(verdict(everything, clean), { kind: 'failed', stop: stop('gate_failed') });
  const waiting = verdict({ ...everything, failure: undefined }, clean);
  assert.equal(waiting.kind === 'failed' && [waiting.stop.failure.reason, waiting.stop.failure.message], [
    'unschedulable',
    'tasks never became ready: w',
  ]);
  const survivors = verdict({ ...everything, failure: undefined, waiting: [] }, clean);
  assert.equal(survivors.kind === 'failed' && [survivors.stop.failure.reason, survivors.stop.task], ['teardown_failed', 's']);
  assert.equal(verdict({ failure: undefined, waiting: [], survivors: undefined, keptGoing: [], notDispatched: [] }, clean), {
    kind: 'land',
  });
});

test('keep-going: the first task stop is the run failure unless a stop of the whole run came; failed lists every task stop', () => {
  const a = { ...stop('gate_failed'), task: 'a' };
  const b = { ...stop('blocked'), task: 'b' };
  const listed = (s: ReturnType<typeof stop>) => ({
    task: s.task,
    class: s.failure.class,
    reason: s.failure.reason,
    phase: s.failure.phase,
  });
  const kept = verdict({ failure: undefined, waiting: ['after'], survivors: undefined, keptGoing: [a, b], notDispatched: [] }, clean);
  assert.equal(kept.kind === 'failed' && [kept.stop.task, kept.stop.failed], ['a', [listed(a), listed(b)]]);
  const budget = { ...stop('max_tokens'), task: null };
  const whole = verdict({ failure: budget, waiting: ['after'], survivors: undefined, keptGoing: [a], notDispatched: [] }, clean);
  assert.equal(whole.kind === 'failed' && [whole.stop.failure.reason, whole.stop.failed], ['max_tokens', [listed(a)]]);
});

test.run();
