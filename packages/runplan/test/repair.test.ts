import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  classifyCommand,
  classifyGate,
  CRASH_CAP,
  decideAfterCrash,
  decideRepair,
  DEFAULT_CAPS,
  emptyHistory,
  FAILURE_CLASSES,
  failureFingerprint,
  MAX_BACKOFF_MS,
  normalizeEvidence,
  recordFailure,
  retryPrompt,
  decideRound,
  budgetExceeded,
  EVIDENCE_LINES,
  TRANSITIONS,
} from '../src/repair/index.js';
import type { FailureClass, FingerprintInput, RepairDecision, RepairInput, TaskHistory } from '../src/repair/index.js';
import type { AttemptFailureData } from '../src/events/types.js';

function failure(cls: FailureClass, evidence = 'boom', overrides: Partial<RepairInput> = {}): RepairInput {
  const f = { class: cls, reason: 'exited' as const, evidenceTail: evidence, ...overrides };
  return { ...f, fingerprint: failureFingerprint({ ...f, baseCommit: 'abc1234', contractDigest: 'c0ffee' }, []) };
}

// Feeds failures of one class, each with new evidence, until the decision is to stop.
function runUntilStop(
  cls: FailureClass,
  caps = DEFAULT_CAPS,
  evidence = (i: number) => `failure number ${'x'.repeat(i)}`,
): { dispatches: number; last: RepairDecision } {
  let history: TaskHistory = emptyHistory();
  for (let i = 1; i < 100; i++) {
    const f = failure(cls, evidence(i));
    const decision = decideRepair(f, history, caps, { now: 0 });
    if (decision.action === 'stop') return { dispatches: i, last: decision };
    history = recordFailure(history, { ...f, attempt: i });
  }
  throw new Error('never stopped');
}

test('default caps', () => {
  assert.equal(DEFAULT_CAPS, { task: 3, gate: 3, timeout: 2, provider: 4, integration: 2, backoffMs: 30_000, providerExitCodes: [] });
});

test('the table covers every class; the never-retried ones stop at once', () => {
  assert.equal(Object.keys(TRANSITIONS).sort(), [...FAILURE_CLASSES].sort());
  const never: FailureClass[] = [
    'environment',
    'teardown',
    'invariant',
    'budget',
    'stagnation',
    'needs_human',
    'engine',
    'interrupted',
    'abandoned',
  ];
  for (const cls of never) {
    const decision = decideRepair(failure(cls), emptyHistory(), DEFAULT_CAPS);
    assert.equal(decision.action, 'stop', cls);
    assert.is((decision as { reason: string }).reason, 'not_retryable', cls);
  }
  const retried = FAILURE_CLASSES.filter((c) => !never.includes(c));
  assert.equal(retried.sort(), ['gate', 'integration', 'provider', 'task', 'timeout']);
});

test('caps count attempts: task 3, gate 3, timeout 2, provider 4, integration 2', () => {
  const expected: [FailureClass, number, string][] = [
    ['task', 3, 'evidence'],
    ['gate', 3, 'evidence'],
    ['timeout', 2, 'evidence'],
    ['provider', 4, 'time'],
    ['integration', 2, 'base'],
  ];
  for (const [cls, attempts, changed] of expected) {
    const { dispatches, last } = runUntilStop(cls);
    assert.is(dispatches, attempts, cls);
    assert.equal(last.action === 'stop' && last.reason, 'cap_exhausted', cls);
    const first = decideRepair(failure(cls), emptyHistory(), DEFAULT_CAPS, { now: 0 });
    assert.equal(first.action === 'retry' && first.changed, changed, cls);
  }
});

test('caps from the plan: 0 and 1 mean no retry, 5 means five attempts', () => {
  for (const cap of [0, 1]) assert.is(runUntilStop('task', { ...DEFAULT_CAPS, task: cap }).dispatches, 1);
  assert.is(runUntilStop('gate', { ...DEFAULT_CAPS, gate: 5 }).dispatches, 5);
});

test('an identical failure is never redispatched: repeated_failure after 2 dispatches', () => {
  for (const cls of ['task', 'gate', 'timeout', 'integration'] as const) {
    const { dispatches, last } = runUntilStop(
      cls,
      { ...DEFAULT_CAPS, task: 10, gate: 10, timeout: 10, integration: 10 },
      () => 'same every time',
    );
    assert.is(dispatches, 2, cls);
    assert.equal(last.action === 'stop' && last.reason, 'repeated_failure', cls);
  }
});

test('provider may repeat its fingerprint (time is its changed input) until its cap', () => {
  const { dispatches, last } = runUntilStop('provider', DEFAULT_CAPS, () => 'API Error: 429 rate_limit_error');
  assert.is(dispatches, 4);
  assert.equal(last.action === 'stop' && last.reason, 'cap_exhausted');
});

test('provider backoff: the reported reset time, else exponential from backoff, bounded', () => {
  let history = emptyHistory();
  const delays: number[] = [];
  for (let i = 0; i < 3; i++) {
    const f = failure('provider', 'limit');
    const d = decideRepair(f, history, { ...DEFAULT_CAPS, provider: 10, backoffMs: 1000 }, { now: 0 });
    assert.is(d.action, 'retry');
    delays.push((d as { delayMs: number }).delayMs);
    history = recordFailure(history, { ...f, attempt: i + 1 });
  }
  assert.equal(delays, [1000, 2000, 4000]);
  const reset = decideRepair(failure('provider', 'limit', { resetAtMs: 50_000 }), emptyHistory(), DEFAULT_CAPS, { now: 20_000 });
  assert.equal(reset, { action: 'retry', delayMs: 30_000, changed: 'time' });
  const past = decideRepair(failure('provider', 'limit', { resetAtMs: 10 }), emptyHistory(), DEFAULT_CAPS, { now: 20_000 });
  assert.equal(past, { action: 'retry', delayMs: 0, changed: 'time' });
  const many = { ...emptyHistory(), byClass: { provider: 30 } };
  const bounded = decideRepair(failure('provider'), many, { ...DEFAULT_CAPS, provider: 100 }, { now: 0 });
  assert.equal(bounded, { action: 'retry', delayMs: MAX_BACKOFF_MS, changed: 'time' });
});

test('a repeat names the attempt number of the earlier failure, not its place in the history', () => {
  // Attempts 1 and 2 were a crash and a success (not failures); attempt 3 failed first.
  const f = failure('task', 'same');
  const history = recordFailure(recordFailure(emptyHistory(), { ...failure('task', 'other'), attempt: 3 }), { ...f, attempt: 5 });
  const d = decideRepair(f, history, DEFAULT_CAPS);
  assert.equal(d.action === 'stop' && [d.reason, d.detail], [
    'repeated_failure',
    `same failure as failed attempt 5 (fingerprint ${f.fingerprint.slice(0, 12)})`,
  ]);
});

test('classes count separately; other retries have no delay', () => {
  let history = emptyHistory();
  history = recordFailure(history, { ...failure('task', 'a'), attempt: 1 });
  history = recordFailure(history, { ...failure('task', 'b'), attempt: 2 });
  assert.equal(decideRepair(failure('gate', 'c'), history, DEFAULT_CAPS), { action: 'retry', delayMs: 0, changed: 'evidence' });
  assert.is(decideRepair(failure('task', 'd'), history, DEFAULT_CAPS).action, 'stop');
  assert.equal(history.attempts, 2);
  assert.equal(history.byClass, { task: 2 });
});

test('rounds_exhausted and land_moved are never retried whatever their class', () => {
  for (const reason of ['rounds_exhausted', 'land_moved'] as const) {
    const d = decideRepair(failure(reason === 'land_moved' ? 'integration' : 'task', 'x', { reason }), emptyHistory(), DEFAULT_CAPS);
    assert.equal(d.action === 'stop' && d.reason, 'not_retryable', reason);
  }
});

test('branch_moved (class integration) is never retried: a new attempt would find the branch moved again', () => {
  const d = decideRepair(failure('integration', 'x', { reason: 'branch_moved' }), emptyHistory(), DEFAULT_CAPS);
  assert.equal(d, { action: 'stop', reason: 'not_retryable', detail: 'branch_moved is never retried' });
  assert.equal(decideRepair(failure('integration', 'x', { reason: 'integration_conflict' }), emptyHistory(), DEFAULT_CAPS).action, 'retry');
});

test('coordinator crashes have their own cap, then class engine', () => {
  assert.equal(decideAfterCrash(emptyHistory()), { action: 'retry' });
  assert.equal(decideAfterCrash({ ...emptyHistory(), crashes: CRASH_CAP - 1 }), { action: 'retry' });
  const stop = decideAfterCrash({ ...emptyHistory(), crashes: CRASH_CAP });
  assert.equal(stop.action === 'stop' && stop.class, 'engine');
});

test('normalizeEvidence masks what differs between runs of the same failure', () => {
  const own = '/home/op/.runplan/work/r1.api.2';
  const a = [
    '\x1b[31mFAIL\x1b[0m test/api.test.ts (1.23s)',
    `  at ${own}/tree/src/api.ts:12:3`,
    '  2026-11-29T07:55:00.123Z request 3f2a9c1d failed after 450ms',
    '  [07:55:00] worker pid 4312 died; temp /tmp/vitest-abc123/x.json',
    '  commit 4f2a8e1b9c0d, run 20261129T075500Z, id 0199a213-81c0-7800-8aa1-bbab2a035a53\r',
    '  took 2 seconds   ',
  ].join('\n');
  const b = [
    '\x1b[31mFAIL\x1b[0m test/api.test.ts (9.87s)',
    '  at /home/op/.runplan/work/r2.api.3/tree/src/api.ts:12:3',
    '  2026-11-30T01:02:03+02:00 request 9e8d7c6b failed after 12ms',
    '  [23:59:59] worker pid 77 died; temp /tmp/vitest-zzz999/x.json',
    '  commit 0a1b2c3d4e5f, run 20261130T010203Z, id 11111111-2222-3333-4444-555555555555',
    '  took 17 seconds',
  ].join('\n');
  const nb = normalizeEvidence(b, ['/home/op/.runplan/work/r2.api.3']);
  assert.is(normalizeEvidence(a, [own]), nb);
  assert.is(
    nb,
    [
      'FAIL test/api.test.ts (<dur>)',
      '  at <own>/tree/src/api.ts:12:3',
      '  <time> request <hex> failed after <dur>',
      '  [<time>] worker pid <pid> died; temp <tmp>',
      '  commit <hex>, run <time>, id <uuid>',
      '  took <dur>',
    ].join('\n'),
  );
  assert.is(normalizeEvidence('spawned in 840\u00B5s, ran 3.5µs', []), 'spawned in <dur>, ran <dur>', 'µs, however written');
  assert.is(
    normalizeEvidence('out in /srv/tmp/x and /var/folders/ab/T/y', [], { tmpDir: '/var/folders/ab/T' }),
    'out in /srv/tmp/x and <tmp>',
  );
  assert.is(normalizeEvidence('x at $T/a/b', [], { tmpDir: '/custom/tmpdir' }), 'x at $T/a/b');
  // A process named by its number, or a log line's program[pid]: (a user trial saw each attempt
  // retried as a new failure for a pid alone).
  assert.is(normalizeEvidence('error: process 48213 crashed', []), normalizeEvidence('error: process 512 crashed', []));
  assert.is(normalizeEvidence('node[1220]: Assertion failed', []), 'node[<pid>]: Assertion failed');
  assert.is.not(normalizeEvidence('items[3] is undefined', []), normalizeEvidence('items[4] is undefined', []), 'an index is kept');
  assert.is.not(normalizeEvidence('expected[3]: 4 got 5', []), normalizeEvidence('expected[7]: 4 got 5', []), 'an index with a colon too');
  assert.is.not(normalizeEvidence('process 3 of 8 failed', []), normalizeEvidence('process 5 of 8 failed', []), 'a count is kept');
  assert.is(normalizeEvidence('x at /custom/tmpdir/a/b', [], { tmpDir: '/custom/tmpdir' }), 'x at <tmp>');
});

test('normalizeEvidence keeps what makes failures different', () => {
  assert.is.not(normalizeEvidence('expected 3 got 4', []), normalizeEvidence('expected 3 got 5', []));
  assert.is.not(normalizeEvidence('src/a.ts:12 TypeError', []), normalizeEvidence('src/b.ts:12 TypeError', []));
  assert.is(normalizeEvidence('defaced accede', []), 'defaced accede', 'words of hex letters are not ids');
});

test('fingerprints: same for failures differing only in timestamps and temp paths; class, base and contract count', () => {
  const base: FingerprintInput & Pick<AttemptFailureData, 'reason' | 'phase'> = {
    class: 'gate',
    reason: 'gate_failed',
    phase: 'gates',
    evidenceTail: 'FAIL at 10:00:01 in /tmp/a1',
    baseCommit: 'b1',
    contractDigest: 'c1',
  };
  const fp = failureFingerprint(base, []);
  assert.match(fp, /^[0-9a-f]{64}$/);
  assert.is(failureFingerprint({ ...base, evidenceTail: 'FAIL at 11:22:33 in /tmp/zz9' }, []), fp);
  const other: typeof base = { ...base, reason: 'exited', phase: 'command' };
  assert.is(failureFingerprint(other, []), fp, 'reason and phase are not part of it');
  assert.is.not(failureFingerprint({ ...base, class: 'task' }, []), fp);
  assert.is.not(failureFingerprint({ ...base, baseCommit: 'b2' }, []), fp);
  assert.is.not(failureFingerprint({ ...base, contractDigest: 'c2' }, []), fp);
  assert.is.not(failureFingerprint({ ...base, evidenceTail: 'FAIL at 10:00:01 in /tmp/a1 differently' }, []), fp);
});

test('classifyCommand: settle reason, agent state and the plan exit codes', () => {
  const task = { blockedExit: 42, repair: { providerExitCodes: [75] } };
  const ok = { blocked: undefined, providerLimited: false, isError: false };
  const cases: [Parameters<typeof classifyCommand>[0], Parameters<typeof classifyCommand>[1], string | undefined][] = [
    [{ reason: 'exited', exitCode: 0 }, ok, undefined],
    [{ reason: 'exited', exitCode: 0 }, undefined, undefined],
    [{ reason: 'interrupted', exitCode: null }, { ...ok, blocked: 'x' }, 'interrupted/interrupted'],
    [{ reason: 'spawn_failed', exitCode: null }, undefined, 'environment/spawn_failed'],
    [{ reason: 'exited', exitCode: 0 }, { ...ok, blocked: 'need creds' }, 'needs_human/blocked'],
    [{ reason: 'exited', exitCode: 42 }, ok, 'needs_human/blocked'],
    [{ reason: 'timed_out', exitCode: null }, { ...ok, blocked: 'x' }, 'needs_human/blocked'],
    [{ reason: 'exited', exitCode: 1 }, { ...ok, providerLimited: true, isError: true }, 'provider/provider_limited'],
    [{ reason: 'exited', exitCode: 75 }, ok, 'provider/provider_limited'],
    [{ reason: 'timed_out', exitCode: null }, ok, 'timeout/timed_out'],
    [{ reason: 'stalled', exitCode: null }, ok, 'timeout/stalled'],
    [{ reason: 'exited', exitCode: 0 }, { ...ok, isError: true }, 'task/agent_error'],
    [{ reason: 'signaled', exitCode: null }, ok, 'task/signaled'],
    [{ reason: 'exited', exitCode: 3 }, ok, 'task/exited'],
    [{ reason: 'exited', exitCode: 0 }, { ...ok, providerLimited: true }, undefined],
    [{ reason: 'stalled', exitCode: null }, { ...ok, providerLimited: true }, 'provider/provider_limited'],
  ];
  for (const [execution, agent, expected] of cases) {
    const c = classifyCommand(execution, agent, task);
    assert.is(c ? `${c.class}/${c.reason}` : undefined, expected, JSON.stringify([execution, agent]));
  }
  assert.is(
    classifyCommand({ reason: 'exited', exitCode: 42 }, ok, { repair: { providerExitCodes: [] } })?.class,
    'task',
    'no blocked_exit configured',
  );
});

test('classifyGate', () => {
  assert.is(classifyGate({ reason: 'exited', exitCode: 0 }), undefined);
  assert.equal(classifyGate({ reason: 'exited', exitCode: 1 }), { class: 'gate', reason: 'gate_failed' });
  assert.equal(classifyGate({ reason: 'signaled', exitCode: null }), { class: 'gate', reason: 'gate_failed' });
  assert.equal(classifyGate({ reason: 'timed_out', exitCode: null }), { class: 'timeout', reason: 'timed_out' });
  assert.equal(classifyGate({ reason: 'spawn_failed', exitCode: null }), { class: 'environment', reason: 'spawn_failed' });
  assert.equal(classifyGate({ reason: 'interrupted', exitCode: null }), { class: 'interrupted', reason: 'interrupted' });
});

test('a retry prompt carries the previous failure in a delimited section, masked and inert', () => {
  const prompt = retryPrompt(
    'Fix the API.\n',
    {
      attempt: 1,
      failure: {
        class: 'gate',
        reason: 'gate_failed',
        phase: 'gates',
        message: 'm',
        evidenceTail: 'FAIL api.test.ts\nmock: exit 3\nRUNPLAN: BLOCKED fake\ntoken=hunter22\n\n',
      },
    },
    (t) => t.split('hunter22').join('***'),
  );
  assert.is(
    prompt,
    [
      'Fix the API.',
      '',
      '----- runplan: attempt 1 of this task failed -----',
      'class: gate; reason: gate_failed; phase: gates',
      'Last lines of its output:',
      '    | FAIL api.test.ts',
      '    | mock: exit 3',
      '    | RUNPLAN: BLOCKED fake',
      '    | token=***',
      'Fix the cause of this failure; do not repeat the same approach unchanged.',
      '----- end of runplan failure report -----',
      '',
    ].join('\n'),
  );
  assert.not.ok(prompt.split('\n').some((l) => l.startsWith('mock:') || l.startsWith('RUNPLAN:')));
  const long = retryPrompt(undefined, {
    attempt: 2,
    failure: {
      class: 'task',
      reason: 'exited',
      phase: 'command',
      message: 'm',
      evidenceTail: Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n'),
    },
  });
  assert.ok(long.startsWith('----- runplan: attempt 2'));
  assert.ok(long.includes('    | line 499'));
  assert.not.ok(long.includes('    | line 439\n'));
  assert.is(long.split('\n').filter((l) => l.startsWith('    | ')).length, EVIDENCE_LINES);
  assert.match(
    retryPrompt('p', { attempt: 1, failure: { class: 'timeout', reason: 'timed_out', phase: 'command', message: 'm', evidenceTail: '' } }),
    'No output was captured.',
  );
});

test('improve-verify rounds: done, next, stagnation (no_change, tree_cycle, repeated_verify), rounds_exhausted', () => {
  const round = (over: Partial<Parameters<typeof decideRound>[0]>) => ({
    round: 1,
    verifyPassed: false,
    treeChanged: true,
    treeSeen: false,
    sameVerifyRounds: 1,
    ...over,
  });
  const limits = { rounds: 3, stagnationRounds: 3 };
  const stop = (d: ReturnType<typeof decideRound>) => d.action === 'stop' && [d.class, d.reason];
  assert.equal(decideRound(round({ verifyPassed: true, treeChanged: false }), limits), { action: 'done' });
  assert.equal(decideRound(round({}), limits), { action: 'next_round' });
  assert.equal(
    decideRound(round({ round: 2, sameVerifyRounds: 2 }), limits),
    { action: 'next_round' },
    'one repeat on a changing tree is progress',
  );
  assert.equal(stop(decideRound(round({ treeChanged: false }), limits)), ['stagnation', 'no_change']);
  assert.equal(stop(decideRound(round({ round: 2, treeSeen: true }), limits)), ['stagnation', 'tree_cycle']);
  assert.equal(stop(decideRound(round({ round: 3, sameVerifyRounds: 3 }), { rounds: 9, stagnationRounds: 3 })), [
    'stagnation',
    'repeated_verify',
  ]);
  assert.equal(stop(decideRound(round({ round: 2, sameVerifyRounds: 2 }), { rounds: 9, stagnationRounds: 2 })), [
    'stagnation',
    'repeated_verify',
  ]);
  assert.equal(stop(decideRound(round({ round: 3 }), limits)), ['task', 'rounds_exhausted']);
  assert.equal(decideRepair(failure('stagnation'), emptyHistory(), DEFAULT_CAPS).action, 'stop');
  assert.equal(decideRepair(failure('task', 'x', { reason: 'rounds_exhausted' }), emptyHistory(), DEFAULT_CAPS).action, 'stop');
});

test('budget: tokens of all four kinds and cost, reaching the limit counts', () => {
  const usage = { inputTokens: 10, outputTokens: 20, cacheReadTokens: 30, cacheCreationTokens: 40 };
  assert.is(budgetExceeded({}, { usage, costUsd: 99 }), undefined);
  assert.is(budgetExceeded({ maxTokens: 101, maxCostUsd: 1 }, { usage, costUsd: 0.5 }), undefined);
  assert.is(budgetExceeded({ maxTokens: 100 }, { usage, costUsd: 0 })?.reason, 'max_tokens');
  assert.is(budgetExceeded({ maxCostUsd: 0.5 }, { usage, costUsd: 0.5 })?.reason, 'max_cost_usd');
  assert.is(budgetExceeded({ maxCostUsd: 0.5 }, { usage, costUsd: 0.5 })?.class, 'budget');
});

test.run();
