import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '@runplan/test-fixtures';
import type { AttemptResult } from '../src/attempt/run-attempt.js';
import type { AfterFailure, FailedAttempt } from '../src/coordinator/after-failure.js';
import { RunLedger } from '../src/coordinator/ledger.js';
import { schedule, type ScheduleEnd, type Settled } from '../src/coordinator/scheduler.js';
import type { AttemptFailureData, UsageTotals } from '../src/events/types.js';
import type { Plan, TaskSpec } from '../src/plan/types.js';

// The DAG loop below the bin: fake attempts the test settles one by one, in the order it
// chooses, so which failure ends the run when several happen is decided by the rule alone.

const NO_USAGE: UsageTotals = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };

function ok(taskId: string, attempt: number, extra: { survivors?: number[]; usage?: UsageTotals } = {}): AttemptResult {
  const checkpoint = {
    id: `cp-${taskId}-${attempt}`,
    logicalRunId: 'run',
    planDigest: 'plan',
    taskId,
    taskContractDigest: 'contract',
    dependencyCheckpointIds: [],
    baseCommit: 'base',
    resultCommit: 'result',
    attempt,
  };
  return { ok: true, taskId, attempt, checkpoint, survivors: extra.survivors ?? [], usage: extra.usage ?? NO_USAGE, costUsd: 0 };
}

function failed(taskId: string, attempt: number, f: Partial<AttemptFailureData> = {}): AttemptResult {
  // A test's failure may pair any reason with any class (the table is tested on its own).
  const failure = {
    class: 'gate',
    reason: 'gate_failed',
    phase: 'gates',
    message: `${taskId} failed`,
    evidenceTail: '',
    ...f,
  } as AttemptFailureData;
  return {
    ok: false,
    taskId,
    attempt,
    failure,
    evidence: [`${taskId}.${attempt}.log`],
    usage: NO_USAGE,
    costUsd: 0,
    baseCommit: 'base',
    ownPaths: [],
  };
}

const DISK: Partial<AttemptFailureData> = { class: 'environment', reason: 'disk_full', detail: { errno: 'ENOSPC', path: '/full' } };
const INTERRUPTED: Partial<AttemptFailureData> = { class: 'interrupted', reason: 'interrupted', phase: 'command' };

/** A scheduler over fake attempts: `settle` ends one, `when` waits for something the loop did. */
function harness(opts: {
  tasks: Array<{ id: string; needs?: string[] }>;
  jobs?: number;
  budget?: Plan['budget'];
  decide?: (r: FailedAttempt) => AfterFailure;
  abort?: AbortController;
}) {
  const plan = { tasks: opts.tasks.map((t) => ({ id: t.id, needs: t.needs ?? [] }) as unknown as TaskSpec), budget: opts.budget ?? {} };
  const ledger = new RunLedger();
  const pending = new Map<string, (s: Settled) => void>();
  const seen = new Set<string>();
  const waiters = new Map<string, Array<() => void>>();
  const happened = (what: string): void => {
    seen.add(what);
    for (const w of waiters.get(what) ?? []) w();
    waiters.delete(what);
  };
  const when = (what: string): Promise<void> =>
    seen.has(what) ? Promise.resolve() : new Promise((resolve) => waiters.set(what, [...(waiters.get(what) ?? []), resolve]));
  const log: string[] = [];
  const abort = opts.abort ?? new AbortController();
  const end: Promise<ScheduleEnd> = schedule({
    plan,
    ledger,
    jobs: opts.jobs ?? 2,
    signal: abort.signal,
    nextAttempt: async (taskId) => (ledger.attempts.get(taskId) ?? 0) + 1,
    dispatch: (task, attempt) =>
      new Promise<Settled>((resolve) => {
        pending.set(`${task.id}#${attempt}`, resolve);
        log.push(`dispatch ${task.id}#${attempt}`);
        happened(`dispatch ${task.id}#${attempt}`);
      }),
    afterSuccess: async (taskId, attempt) => {
      log.push(`success ${taskId}#${attempt}`);
      happened(`success ${taskId}#${attempt}`);
    },
    afterFailure: async (task, r) => {
      log.push(`repair ${task.id}#${r.attempt}`);
      happened(`repair ${task.id}#${r.attempt}`);
      return opts.decide?.(r) ?? { stop: { ...r.failure, reason: 'repeated_failure' } };
    },
  });
  // Ends the dispatched attempt `key` (task#attempt) with `result`.
  const settle = async (key: string, result: AttemptResult | 'journal'): Promise<void> => {
    await when(`dispatch ${key}`);
    const resolve = pending.get(key)!;
    const taskId = key.split('#')[0]!;
    resolve(result === 'journal' ? { kind: 'journal', taskId, error: new Error('journal refused') } : { kind: 'attempt', taskId, result });
  };
  return { end, settle, when, log, ledger, abort };
}

test(
  'a task waits for its needs; each checkpoint lands in the ledger; nothing left waiting',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }, { id: 'b', needs: ['a'] }] });
    await h.settle('a#1', ok('a', 1));
    await h.settle('b#1', ok('b', 1));
    const end = await h.end;
    assert.equal(h.log, ['dispatch a#1', 'success a#1', 'dispatch b#1', 'success b#1']);
    assert.equal(end, { failure: undefined, waiting: [], survivors: undefined, keptGoing: [], notDispatched: [] });
    assert.equal(
      [...h.ledger.checkpoints],
      [
        ['a', 'cp-a-1'],
        ['b', 'cp-b-1'],
      ],
    );
    assert.is(h.ledger.totalAttempts(), 2);
  }),
);

test(
  'a retry re-dispatches the task under the next attempt number',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }], decide: () => ({ retryInMs: 0 }) });
    await h.settle('a#1', failed('a', 1));
    await h.settle('a#2', ok('a', 2));
    const end = await h.end;
    assert.equal(h.log, ['dispatch a#1', 'repair a#1', 'dispatch a#2', 'success a#2']);
    assert.is(end.failure, undefined);
    assert.is(h.ledger.totalAttempts(), 2);
  }),
);

test(
  'the first stop ends dispatching: a later task is left waiting, a retry after it is not dispatched',
  withTimeout(10_000, async () => {
    const h = harness({
      tasks: [{ id: 'a' }, { id: 'b' }, { id: 'c', needs: ['a'] }],
      decide: (r) => (r.taskId === 'b' ? { retryInMs: 0 } : { stop: r.failure }),
    });
    await h.settle('a#1', failed('a', 1));
    await h.when('repair a#1');
    await h.settle('b#1', failed('b', 1));
    const end = await h.end;
    assert.equal(h.log, ['dispatch a#1', 'dispatch b#1', 'repair a#1', 'repair b#1']);
    assert.is(end.failure?.task, 'a');
    assert.equal(end.waiting, ['c']);
  }),
);

test(
  'a disk failure replaces a stop that came first, and skips repair',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }, { id: 'b' }] });
    await h.settle('a#1', failed('a', 1));
    await h.when('repair a#1');
    await h.settle('b#1', failed('b', 1, DISK));
    const end = await h.end;
    assert.equal(h.log, ['dispatch a#1', 'dispatch b#1', 'repair a#1']);
    assert.is(end.failure?.task, 'b');
    assert.is(end.failure?.failure.reason, 'disk_full');
    assert.equal(end.failure?.evidence, ['b.1.log']);
  }),
);

test(
  'a stop after a disk failure does not replace it',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }, { id: 'b' }] });
    await h.settle('a#1', failed('a', 1, DISK));
    await h.settle('b#1', failed('b', 1));
    const end = await h.end;
    assert.is(end.failure?.task, 'a');
    assert.is(end.failure?.failure.reason, 'disk_full');
  }),
);

test(
  'a disk reason without its detail is an ordinary failure that repair judges',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }] });
    await h.settle('a#1', failed('a', 1, { ...DISK, detail: undefined }));
    const end = await h.end;
    assert.equal(h.log, ['dispatch a#1', 'repair a#1']);
    assert.is(end.failure?.failure.reason, 'repeated_failure');
  }),
);

test(
  'a repair stop replaces an interruption that came first',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }, { id: 'b' }] });
    await h.settle('a#1', failed('a', 1, INTERRUPTED));
    await h.settle('b#1', failed('b', 1));
    const end = await h.end;
    assert.equal(h.log, ['dispatch a#1', 'dispatch b#1', 'repair b#1']);
    assert.is(end.failure?.task, 'b');
    assert.is(end.failure?.failure.reason, 'repeated_failure');
  }),
);

test(
  'an interruption after a stop does not replace it',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }, { id: 'b' }] });
    await h.settle('a#1', failed('a', 1));
    await h.when('repair a#1');
    await h.settle('b#1', failed('b', 1, INTERRUPTED));
    const end = await h.end;
    assert.is(end.failure?.task, 'a');
  }),
);

test(
  'once the run is aborted a failure is not judged by repair and nothing new is dispatched',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }, { id: 'b', needs: ['a'] }], decide: () => ({ retryInMs: 0 }) });
    await h.when('dispatch a#1');
    h.abort.abort('SIGTERM');
    await h.settle('a#1', failed('a', 1));
    const end = await h.end;
    assert.equal(h.log, ['dispatch a#1']);
    assert.is(end.failure?.task, 'a');
    assert.equal(end.waiting, ['b']);
  }),
);

test(
  'a spent budget stops dispatching before the next task',
  withTimeout(10_000, async () => {
    const usage = { ...NO_USAGE, outputTokens: 50 };
    const h = harness({ tasks: [{ id: 'a' }, { id: 'b', needs: ['a'] }], budget: { maxTokens: 50 } });
    await h.settle('a#1', ok('a', 1, { usage }));
    const end = await h.end;
    assert.equal(h.log, ['dispatch a#1', 'success a#1']);
    assert.is(end.failure?.failure.class, 'budget');
    assert.is(end.failure?.failure.reason, 'max_tokens');
    assert.is(end.failure?.task, null);
    assert.equal(end.waiting, ['b']);
    assert.equal(h.ledger.usage, usage);
  }),
);

test(
  'a budget spent with nothing left to dispatch is no failure',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }], budget: { maxTokens: 1 } });
    await h.settle('a#1', ok('a', 1, { usage: { ...NO_USAGE, inputTokens: 5 } }));
    const end = await h.end;
    assert.is(end.failure, undefined);
  }),
);

test(
  'survivors of a checkpointed attempt are reported (the first task only); a journal failure settles nothing',
  withTimeout(10_000, async () => {
    const h = harness({ tasks: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], jobs: 3 });
    await h.settle('a#1', ok('a', 1, { survivors: [41] }));
    await h.when('success a#1');
    await h.settle('b#1', ok('b', 1, { survivors: [42] }));
    await h.when('success b#1');
    await h.settle('c#1', 'journal');
    const end = await h.end;
    assert.equal(end.survivors, { task: 'a', pids: [41] });
    assert.is(end.failure, undefined);
    assert.equal(end.waiting, []);
    assert.not.ok(h.ledger.checkpoints.has('c'));
  }),
);

test.run();
