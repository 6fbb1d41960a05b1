import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_LINE_BYTES } from '@runplan/journal';
import { taskListDigest } from '../src/plan/digest.js';
import { loadPlan } from '../src/plan/load.js';
import { RunView as JournalFold } from '../src/events/view.js';
import { shownCost } from '../src/events/types.js';
import { journalPath, ofType, records, runplan, withPlan } from './support.js';

const N = 12_000;

// N trivial tasks (never dispatched here: the coordinator is stopped once run-started is durable).
function bigPlan(n: number): string {
  const tasks = Array.from({ length: n }, (_, i) => `[[tasks]]\nid = "t${String(i + 1).padStart(5, '0')}"\n`).join('\n');
  return `slug = "big"\nbase = "main"\n[defaults]\ncommand = ["/bin/true"]\nformat = "text"\nexpect = "none"\n\n${tasks}`;
}

test(
  `a plan of ${N} tasks starts: run-started is one small record (task count + task list digest), far below the line limit`,
  withPlan(bigPlan(N), { timeoutMs: 120_000, env: { RUNPLAN_FAILPOINT: 'kill-after:run-started' } }, async (f) => {
    const r = await runplan(['run', f.plan], f, 110_000);
    // The fail point SIGKILLs the coordinator once run-started is durable.
    assert.is(r.signal, 'SIGKILL', `exit ${r.exitCode}: ${r.stderr}`);
    const rs = await records(f.repo, 'big');
    assert.equal(
      rs.map((x) => x.type),
      ['journal-header', 'run-started'],
    );
    const started = ofType(rs, 'run-started')[0]!;
    assert.is(started.taskCount, N);
    const plan = await loadPlan(f.plan);
    assert.ok(plan.ok);
    if (plan.ok) assert.is(started.tasksDigest, taskListDigest(plan.value));
    const line = readFileSync(journalPath(f.repo, 'big'), 'utf8').split('\n')[1]!;
    assert.ok(Buffer.byteLength(line) < 4096, `run-started is ${Buffer.byteLength(line)} bytes`);
    assert.ok(statSync(journalPath(f.repo, 'big')).size < MAX_LINE_BYTES);
    // The plan copy beside the journal holds every task.
    const copy = JSON.parse(readFileSync(String(started.planCopy), 'utf8')) as { tasks: unknown[] };
    assert.is(copy.tasks.length, N);
  }),
);

// Records as the coordinator journals them (only the fields the fold reads).
function record(seq: number, type: string, data: Record<string, unknown>, terminal = false) {
  return { seq, prev: '00000000', ts: '2026-11-29T07:55:00.000Z', type, data, ...(terminal ? { terminal: true as const } : {}) };
}

// A chain of n tasks listed from its end: each needs the next in the file; with `ring`, the last needs the first.
function reverseChain(n: number, ring: boolean): string {
  const tasks = Array.from({ length: n }, (_, i) => {
    const need = i + 1 < n ? `t${i + 1}` : ring ? 't0' : undefined;
    return `[[tasks]]\nid = "t${i}"\n${need === undefined ? '' : `needs = ["${need}"]\n`}`;
  }).join('\n');
  return `slug = "chain"\nbase = "main"\n[defaults]\ncommand = ["/bin/true"]\nformat = "text"\nexpect = "none"\n\n${tasks}`;
}

test(
  'a chain of 20 000 tasks listed from its end validates (exit 0); closed into a ring it is one cycle problem (exit 2), never a stack overflow',
  withPlan(reverseChain(20_000, false), { timeoutMs: 60_000 }, async (f) => {
    // The cycle search recursed once per task: ~5 000 deep was `internal_error: Maximum call stack size exceeded`, exit 1.
    const valid = await runplan(['validate', f.plan], f);
    assert.is(valid.exitCode, 0, valid.stderr);
    assert.match(valid.stderr, 'runplan: valid: ');
    writeFileSync(f.plan, reverseChain(20_000, true));
    const ring = await runplan(['validate', f.plan], f);
    assert.is(ring.exitCode, 2, ring.stderr);
    assert.match(ring.stderr, 'runplan: cycle: ');
    assert.match(ring.stderr, 'tasks[0].needs: needs form a cycle: t0 → t1 → t2 → ');
    assert.match(ring.stderr, ' → t19999 → t0\n');
    assert.not.match(ring.stderr, 'internal_error');
  }),
);

test('the journal fold: a stopped task keeps the contract its attempt ran under; records before run-started wait for its carried totals', () => {
  const fold = new JournalFold();
  const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheCreationTokens: 0 };
  fold.add(record(0, 'journal-header', { format: 1, runId: 'r', salt: 's' }));
  // Never written before run-started by runplan; still counted on top of what it carried.
  fold.add(record(1, 'usage', { taskId: 'a', attempt: 1, usage, costUsd: 0.25 }));
  assert.is(fold.started, undefined);
  fold.add(record(2, 'run-started', { planDigest: 'p1', baseCommit: 'b', usageCarried: usage, costCarried: 0.5, coordinator: null }));
  assert.is(fold.costUsd, 0.75);
  assert.equal(fold.usage, { inputTokens: 2, outputTokens: 4, cacheReadTokens: 0, cacheCreationTokens: 0 });
  fold.add(record(3, 'attempt-started', { taskId: 'a', attempt: 1, ownerTag: 't1', evidenceDir: '/e', contractDigest: 'c1' }));
  fold.add(record(4, 'attempt-closed', { taskId: 'a', attempt: 1, reason: 'exited', failure: { class: 'task' } }));
  fold.add(
    record(5, 'repair-decided', {
      taskId: 'a',
      attempt: 1,
      class: 'task',
      fingerprint: 'f',
      action: 'stop',
      stopReason: 'repeated_failure',
      detail: 'd',
    }),
  );
  fold.add(record(6, 'plan-amended', { from: 'p1', to: 'p2' }));
  fold.add(record(7, 'run-failed', { class: 'task' }, true));
  assert.equal(fold.stopped.get('a'), { class: 'task', reason: 'repeated_failure', detail: 'd', contractDigest: 'c1', resetAtMs: null });
  assert.is(fold.planDigest, 'p2');
  assert.is(fold.terminal?.type, 'run-failed');
  assert.is(fold.attemptsTotal, 1);
  assert.is(fold.open.size, 0);
});

test('costs are summed as spent and shown in whole micro-dollars: 0.1 + 0.2 shows as 0.3; 1000 × 4e-7 does not round away', () => {
  assert.is(shownCost(0.1 + 0.2), 0.3);
  let small = 0;
  for (let i = 0; i < 1000; i++) small += 4e-7;
  assert.is(shownCost(small), 0.0004);
  const fold = new JournalFold();
  const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheCreationTokens: 0 };
  fold.add(record(0, 'journal-header', { format: 1, runId: 'r', salt: 's' }));
  fold.add(record(1, 'run-started', { planDigest: 'p1', baseCommit: 'b', usageCarried: usage, costCarried: 0.1, coordinator: null }));
  fold.add(record(2, 'usage', { taskId: 'a', attempt: 1, usage, costUsd: 0.2 }));
  fold.add(record(3, 'command-settled', { taskId: 'a', attempt: 2, usage, costUsd: 0.0709 }));
  assert.ok(Math.abs(fold.costUsd - 0.3709) < 1e-12);
  assert.is(shownCost(fold.costUsd), 0.3709);
});

test.run();
