// The journal's one reading (RunView) as `status` and the progress table use it.
import { PassThrough } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RunView } from '../src/events/view.js';
import { Progress, SafeOutput } from '../src/observe/progress.js';

// Records as the coordinator journals them (only the fields read here).
function record(seq: number, type: string, data: Record<string, unknown>, terminal = false) {
  return {
    seq,
    prev: '00000000',
    ts: `2026-11-29T07:55:${String(seq).padStart(2, '0')}.000Z`,
    type,
    data,
    ...(terminal ? { terminal: true as const } : {}),
  };
}

const usage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheCreationTokens: 0 };
const checkpoint = (taskId: string) => ({ id: `c-${taskId}`, taskId, attempt: 1, baseCommit: 'b', resultCommit: 'r' });

// A continuation: a adopted, b run to its checkpoint, c still in its gates.
const continued = [
  record(0, 'journal-header', { format: 1, runId: 'r', salt: 's' }),
  record(1, 'run-started', { planDigest: 'p', taskCount: 3, usageCarried: usage, costCarried: 0.5, coordinator: null }),
  record(2, 'checkpoint-adopted', { origin: 'o', taskId: 'a', checkpoint: checkpoint('a') }),
  record(3, 'attempt-started', { taskId: 'b', attempt: 2, ownerTag: 'tb', evidenceDir: '/e' }),
  record(4, 'command-settled', { taskId: 'b', attempt: 2, usage, costUsd: 0.25 }),
  record(5, 'checkpoint', { ...checkpoint('b'), attempt: 2 }),
  record(6, 'attempt-closed', { taskId: 'b', attempt: 2, outcome: 'success', reason: 'ok', failure: null }),
  record(7, 'attempt-started', { taskId: 'c', attempt: 1, ownerTag: 'tc', evidenceDir: '/e' }),
  record(8, 'command-settled', { taskId: 'c', attempt: 1, usage, costUsd: 0.125 }),
  record(9, 'gates-done', { taskId: 'c', attempt: 1, phase: 'gates', passed: true }),
];

test('a continued run: tasks done count the adopted one, totals start from what run-started carried', () => {
  const view = new RunView();
  for (const r of continued) view.add(r);
  assert.is(view.tasksDone(), 2);
  assert.is(view.taskCount, 3);
  assert.is(view.costUsd, 0.875);
  assert.equal(view.usage, { inputTokens: 30, outputTokens: 6, cacheReadTokens: 0, cacheCreationTokens: 0 });
  assert.is(view.attemptsTotal, 2);
  assert.equal(view.current(), ['c']);
  assert.is(view.startedTs, continued[1]!.ts);
  assert.is(view.lastSeen, continued[9]!.ts);
});

test('the progress table: each task in words as its records move it on', () => {
  const out = () => new SafeOutput(new PassThrough());
  const progress = new Progress({ stderr: out(), stdout: out(), json: false, table: false, now: () => 0 });
  progress.tasks(['a', 'b', 'c', 'd']);
  for (const r of continued) progress.record(r);
  progress.record(record(10, 'attempt-closed', { taskId: 'c', attempt: 1, outcome: 'failed', reason: 'gate_failed', failure: null }));
  assert.equal(
    progress.rows().map((r) => [r.task, r.state, r.attempt]),
    [
      ['a', 'adopted', 0],
      ['b', 'done', 2],
      ['c', 'failed (gate_failed)', 1],
      ['d', 'waiting', 0],
    ],
  );
  const c = progress.rows()[2]!;
  assert.is(c.endedAt! - c.startedAt!, 3000);
  progress.close();
});

test.run();
