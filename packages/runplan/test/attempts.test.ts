// Attempt numbers never repeat for a task: past what the journal records, past what the
// disk holds (a journal that lost records), and across continuations and fresh runs.
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin } from '@runplan/test-fixtures';
import { openWriter } from '@runplan/journal';
import { alive, journalPath, ofType, records, RUNPLAN, runplan, waitForHolding, withPlan } from './support.js';

// The attempt numbers the mock agent was started with for a task, in order.
function attemptsOf(ledger: string, task: string): number[] {
  return readLedger(ledger)
    .filter((e) => e.task === task)
    .map((e) => e.attempt);
}

test(
  'a journal that lost an attempt-started (cut back as a restore from backup would): the resume numbers past the attempt on disk, journals attempt-renumbered, completes',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:command-settled' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const journal = journalPath(f.repo, 'single');
    const lines = readFileSync(journal, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"type":"attempt-started"'));
    assert.ok(at > 0, 'the crashed run journaled its attempt');
    writeFileSync(journal, lines.slice(0, at).join('\n') + '\n');

    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal(attemptsOf(f.ledger, 'only'), [1, 2], 'the second attempt is number 2, not 1 again');
    const rs = await records(f.repo, 'single');
    const renumbered = ofType(rs, 'attempt-renumbered');
    assert.is(renumbered.length, 1);
    assert.is(renumbered[0]!.taskId, 'only');
    assert.is(renumbered[0]!.attempt, 2);
    assert.equal(
      renumbered[0]!.skipped.map((s: { attempt: number }) => s.attempt),
      [1],
    );
    assert.match(renumbered[0]!.skipped[0].found, /only\.1/);
    assert.equal(
      ofType(rs, 'attempt-started').map((a) => a.attempt),
      [2],
    );
    assert.is(rs.at(-1)!.type, 'run-complete');
  }),
);

test(
  "a resume ends an agent whose attempt-started the journal lost (found by the run's ownerTag prefix), then runs the task again",
  withPlan('single', { timeoutMs: 120_000, env: { MOCK_HOLD: 'only:1', MOCK_HOLD_SECONDS: '120' } }, async (f) => {
    let pid = 0;
    const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
    const journal = await waitForHolding(f.repo, 'single', 'only');
    process.kill(pid, 'SIGKILL');
    await running;
    const agent = readLedger(f.ledger)[0]!;
    assert.ok(alive(agent.pid), 'the agent outlived its coordinator');
    const lines = readFileSync(journal, 'utf8').split('\n');
    writeFileSync(
      journal,
      lines
        .slice(
          0,
          lines.findIndex((l) => l.includes('"type":"attempt-started"')),
        )
        .join('\n') + '\n',
    );

    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.not.ok(alive(agent.pid), 'the resume ended it');
    assert.equal(attemptsOf(f.ledger, 'only'), [1, 2]);
  }),
);

test(
  'attempt numbers continue across continuations and --fresh: the Nth attempt of a task in the slug history is attempt N',
  withPlan('repeat-fail', { timeoutMs: 120_000 }, async (f) => {
    const first = await runplan(['run', f.plan], f);
    assert.is(first.exitCode, 1, first.stderr);
    assert.equal(attemptsOf(f.ledger, 'broken'), [1, 2]);
    const retried = await runplan(['run', f.plan, '--retry', 'broken'], f);
    assert.is(retried.exitCode, 1, retried.stderr);
    assert.equal(attemptsOf(f.ledger, 'broken'), [1, 2, 3, 4], 'a continuation numbers on');
    const rs = await records(f.repo, 'repeat-fail');
    assert.equal(
      ofType(rs, 'attempt-started').map((a) => a.attempt),
      [3, 4],
    );
    assert.is(ofType(rs, 'run-failed')[0]!.attempts, 2, 'the receipt counts the attempts this run made');
    const fresh = await runplan(['run', f.plan, '--fresh'], f);
    assert.is(fresh.exitCode, 1, fresh.stderr);
    assert.equal(attemptsOf(f.ledger, 'broken'), [1, 2, 3, 4, 5, 6], 'so does a fresh run');
  }),
);

test(
  'a journal whose own records collide (two attempt-started of one task and number): the resume refuses, exit 3 attempt_collision, nothing dispatched',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:attempt-started' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const journal = journalPath(f.repo, 'single');
    const started = ofType(await records(f.repo, 'single'), 'attempt-started')[0]!;
    const writer = await openWriter(journal, { create: false });
    if (!writer.ok) throw new Error(writer.error.message);
    await writer.value.append('attempt-started', started);
    await writer.value.close();
    const dispatched = readLedger(f.ledger).length;

    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /attempt_collision: run \S+: attempt 1 of task only is started twice in the journal \(again at seq \d+\)/);
    assert.is(readLedger(f.ledger).length, dispatched, 'nothing dispatched');
  }),
);

test.run();
