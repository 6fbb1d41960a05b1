import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AttemptResult } from '../src/attempt/run-attempt.js';
import { RunLedger } from '../src/coordinator/ledger.js';
import type { AttemptFailureData, CheckpointData, UsageTotals } from '../src/events/types.js';
import { RunView } from '../src/events/view.js';
import { emptyHistory } from '../src/repair/index.js';
import type { RecoveredRun } from '../src/resume/recover.js';

// RunLedger below the bin: what a settled attempt, a recovered journal and a continuation do
// to the run's in-memory truth.

const usage = (inputTokens: number): UsageTotals => ({ inputTokens, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 });

function checkpoint(taskId: string, attempt: number): CheckpointData {
  return {
    id: `cp-${taskId}`,
    logicalRunId: 'run',
    planDigest: 'plan',
    taskId,
    taskContractDigest: 'contract',
    dependencyCheckpointIds: [],
    baseCommit: 'base',
    resultCommit: 'result',
    attempt,
  };
}

const failure: AttemptFailureData = { class: 'gate', reason: 'gate_failed', phase: 'gates', message: 'red', evidenceTail: '' };

function failed(taskId: string, attempt: number): AttemptResult {
  return { ok: false, taskId, attempt, failure, evidence: [], usage: usage(3), costUsd: 0.5, baseCommit: 'base', ownPaths: [] };
}

function recovered(): RecoveredRun {
  return {
    view: new RunView(),
    started: {} as RecoveredRun['started'],
    checkpoints: [checkpoint('a', 2)],
    head: 'result',
    attempts: new Map([
      ['a', 2],
      ['b', 1],
    ]),
    trees: new Map([['b', [{ attempt: 1, worktree: '/w/b.1/tree' }]]]),
    open: [],
    crashes: new Map(),
    planDigest: 'plan',
    coordinator: null,
    usage: usage(10),
    costUsd: 1.25,
    attemptsTotal: 3,
    histories: new Map([['b', emptyHistory()]]),
    lastFailure: new Map([['b', { attempt: 1, failure }]]),
    durableRounds: new Map([['b', { attempt: 1, round: 2, ref: 'refs/runplan/s/rounds/r/b/1/2', commit: 'c'.repeat(40) }]]),
    stopped: new Map(),
  };
}

test('a success is the task checkpoint, counts its usage and clears the failure the next prompt would quote', () => {
  const ledger = new RunLedger();
  ledger.lastFailure.set('a', { attempt: 1, failure });
  ledger.settled({ ok: true, taskId: 'a', attempt: 2, checkpoint: checkpoint('a', 2), survivors: [], usage: usage(7), costUsd: 0.25 });
  assert.equal([...ledger.checkpoints], [['a', 'cp-a']]);
  assert.not.ok(ledger.lastFailure.has('a'));
  assert.equal(ledger.usage, usage(7));
  assert.is(ledger.costUsd, 0.25);
});

test('a failure counts its usage and leaves checkpoints and the last failure to repair', () => {
  const ledger = new RunLedger();
  ledger.settled(failed('a', 1));
  ledger.settled(failed('a', 2));
  assert.is(ledger.checkpoints.size, 0);
  assert.is(ledger.lastFailure.size, 0);
  assert.equal(ledger.usage, usage(6));
  assert.is(ledger.costUsd, 1);
});

test('each dispatch is counted and raises the task attempt number', () => {
  const ledger = new RunLedger();
  ledger.dispatched('a', 1);
  ledger.dispatched('b', 4);
  ledger.dispatched('a', 2);
  assert.is(ledger.totalAttempts(), 3);
  assert.equal(
    [...ledger.attempts],
    [
      ['a', 2],
      ['b', 4],
    ],
  );
});

test('load takes what the journal proved; a resume counts on from it', () => {
  const ledger = new RunLedger();
  ledger.load(recovered());
  assert.equal([...ledger.checkpoints], [['a', 'cp-a']]);
  assert.equal(ledger.attempts.get('a'), 2);
  assert.is(ledger.totalAttempts(), 3);
  assert.equal(ledger.trees.get('b'), [{ attempt: 1, worktree: '/w/b.1/tree' }]);
  assert.equal(ledger.usage, usage(10));
  assert.is(ledger.costUsd, 1.25);
  assert.ok(ledger.histories.has('b'));
  assert.equal(ledger.lastFailure.get('b'), { attempt: 1, failure });
  assert.is(ledger.durableRounds.get('b')?.round, 2);
  ledger.dispatched('b', 2);
  assert.is(ledger.totalAttempts(), 4);
});

test('load copies the recovered trees: removing them does not change the RecoveredRun', () => {
  const r = recovered();
  const ledger = new RunLedger();
  ledger.load(r);
  ledger.trees.get('b')!.pop();
  assert.is(r.trees.get('b')!.length, 1);
});

test('a continuation forgets attempt numbers, the count and loop rounds, and keeps the rest', () => {
  const ledger = new RunLedger();
  ledger.load(recovered());
  ledger.forgetAttempts();
  assert.is(ledger.attempts.size, 0);
  assert.is(ledger.totalAttempts(), 0);
  assert.is(ledger.durableRounds.size, 0);
  assert.is(ledger.checkpoints.size, 1);
  assert.equal(ledger.usage, usage(10));
  assert.ok(ledger.lastFailure.has('b'));
});

test.run();
