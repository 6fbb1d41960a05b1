// What a resume refuses in the checkpoints it finds, through the bin: a checkpoint whose id
// is not the sha256 of its key fields, or whose dependency ids are not the checkpoints of
// its needs — in a journal whose every checksum and chain holds, so it reads as valid — and
// a completed task the plan no longer has. Each is refused (exit 3), and nothing runs again.
import { readFileSync, writeFileSync } from 'node:fs';
import { checkpointId } from '../src/attempt/integrate.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts } from '@runplan/test-fixtures';
import { encodeRecord, readJournal, validateJournal } from '@runplan/journal';
import type { JournalRecord } from '@runplan/journal';
import { journalPath, mockPlan, runplan, withPlan } from './support.js';

// Writes `records` as the journal, re-encoded from the top: every checksum and prev holds.
async function rewrite(journal: string, records: JournalRecord[]): Promise<void> {
  let prev = '00000000';
  const lines = records.map((r) => {
    const line = encodeRecord({ ...r, prev });
    prev = line.crc;
    return line.bytes;
  });
  writeFileSync(journal, Buffer.concat(lines));
  assert.equal((await validateJournal(journal)).status, { kind: 'clean' }, 'a valid journal');
}

test(
  'a checkpoint whose id is not its key digest: the resume is refused (checkpoint_invalid), exit 3, no task dispatched again',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:checkpoint:a' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const journal = journalPath(f.repo, 'chain');
    const { records } = await readJournal(journal);
    const checkpoint = records.find((r) => r.type === 'checkpoint');
    assert.ok(checkpoint, 'the crash came after a checkpoint');
    checkpoint.data.id = 'f'.repeat(64);
    await rewrite(journal, records);

    const before = dispatchCounts(f.ledger);
    const resumed = await runplan(['run', f.plan], f);
    assert.is(resumed.exitCode, 3, resumed.stderr);
    assert.match(resumed.stderr, /checkpoint_invalid/);
    assert.match(resumed.stderr, /the checkpoint of task a does not match its id \(ffffffffffff vs [0-9a-f]{12}\)/);
    assert.equal(dispatchCounts(f.ledger), before, 'nothing dispatched');
  }),
);

test(
  'a checkpoint whose dependency ids are not the checkpoints of its needs (its id recomputed to match): dependency_mismatch, exit 3',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:checkpoint:b' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const journal = journalPath(f.repo, 'chain');
    const { records } = await readJournal(journal);
    const b = records.find((r) => r.type === 'checkpoint' && r.data.taskId === 'b');
    assert.ok(b, 'b was checkpointed');
    const data = b.data as unknown as Parameters<typeof checkpointId>[0] & { id: string };
    data.dependencyCheckpointIds = ['e'.repeat(64)];
    data.id = checkpointId(data);
    await rewrite(journal, records);

    const before = dispatchCounts(f.ledger);
    const resumed = await runplan(['run', f.plan], f);
    assert.is(resumed.exitCode, 3, resumed.stderr);
    assert.match(resumed.stderr, /dependency_mismatch/);
    assert.match(
      resumed.stderr,
      /the checkpoint of task b names dependency checkpoints that are not the valid checkpoints of its needs \(a\)/,
    );
    assert.equal(dispatchCounts(f.ledger), before, 'nothing dispatched');
  }),
);

test(
  'a checkpoint record whose id or commit is not a string (checksums intact): checkpoint_invalid naming the field, exit 3, never internal_error',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:checkpoint:a' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const journal = journalPath(f.repo, 'chain');
    const { records } = await readJournal(journal);
    const before = dispatchCounts(f.ledger);
    // An id that was not a string: `internal_error: Cannot read properties of null (reading 'slice')`, exit 1.
    for (const [key, value, shown] of [
      ['id', null, 'null'],
      ['id', 7, '7'],
      ['resultCommit', { sha: 'x' }, '{"sha":"x"}'],
    ] as const) {
      const tampered = records.map((r) => (r.type === 'checkpoint' ? { ...r, data: { ...r.data, [key]: value } } : r));
      await rewrite(journal, tampered);
      for (const args of [
        ['run', f.plan],
        ['run', '--dry-run', f.plan],
      ]) {
        const resumed = await runplan(args, f);
        assert.is(resumed.exitCode, 3, `${key} ${shown} ${args.join(' ')}: ${resumed.stderr}`);
        assert.match(resumed.stderr, `runplan: checkpoint_invalid: run `);
        assert.match(resumed.stderr, `: a checkpoint record is malformed: its ${key} is ${shown}\n`);
        assert.not.match(resumed.stderr, 'internal_error');
      }
    }
    assert.equal(dispatchCounts(f.ledger), before, 'nothing dispatched');
  }),
);

test(
  'an attempt-started record whose attempt or task is malformed (checksums intact): run refuses, run_unreadable naming it, exit 3, nothing journaled',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:attempt-started:b' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const journal = journalPath(f.repo, 'chain');
    const { records } = await readJournal(journal);
    const at = records.findIndex((r) => r.type === 'attempt-started' && r.data.taskId === 'b');
    const before = dispatchCounts(f.ledger);
    // Folded as written, a missing attempt numbered the next one NaN (attempt-started `attempt: null`,
    // then a run-failed receipt, exit 1); a task of null was closed as `attempt-closed #1` for no task (exit 0).
    for (const [key, value, shown] of [
      ['attempt', undefined, 'attempt missing, not a positive integer'],
      ['attempt', 'x', 'attempt "x", not a positive integer'],
      ['taskId', null, 'taskId null, not a task id'],
    ] as const) {
      const tampered = records.map((r, i) => (i === at ? { ...r, data: { ...r.data, [key]: value } } : r));
      await rewrite(journal, tampered);
      const size = readFileSync(journal).length;
      const resumed = await runplan(['run', f.plan], f);
      assert.is(resumed.exitCode, 3, `${key} ${shown}: ${resumed.stderr}`);
      assert.match(resumed.stderr, `runplan: run_unreadable: run `);
      assert.match(resumed.stderr, `: the attempt-started record at seq ${records[at]!.seq} has ${shown}: ${journal}\n`);
      assert.is(readFileSync(journal).length, size, 'nothing journaled');
    }
    assert.equal(dispatchCounts(f.ledger), before, 'nothing dispatched');
  }),
);

const TWO = mockPlan({
  slug: 'two',
  tasks: `[[tasks]]
id = "x"
prompt = "mock: write out/x.txt x"
[[tasks]]
id = "y"
prompt = "mock: write out/y.txt y"
`,
});

test(
  'a completed task removed from the plan before the resume: task_removed, exit 3, the hint says to restore it or --fresh',
  withPlan(TWO, { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:checkpoint:x' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    writeFileSync(f.plan, TWO.replace(/\[\[tasks\]\]\nid = "x"\nprompt = "mock: write out\/x.txt x"\n/, ''));
    const before = dispatchCounts(f.ledger);
    const resumed = await runplan(['run', f.plan], f);
    assert.is(resumed.exitCode, 3, resumed.stderr);
    assert.match(resumed.stderr, /task_removed/);
    assert.match(resumed.stderr, /completed task x is no longer in/);
    assert.match(resumed.stderr, /restore the task in the plan, or start over with --fresh/);
    assert.equal(dispatchCounts(f.ledger), before, 'nothing dispatched');
  }),
);

test.run();
