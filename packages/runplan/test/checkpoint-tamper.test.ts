// A checkpoint is trusted only when its id is the sha256 of its key fields: a journal whose
// checkpoint names another id — every line's checksum and chain intact, so it reads as a
// valid journal — is refused on resume (checkpoint_invalid), and nothing runs again.
import { writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts } from '@runplan/test-fixtures';
import { encodeRecord, readJournal, validateJournal } from '@runplan/journal';
import { journalPath, runplan, withPlan } from './support.js';

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
    // Re-encoded from the top: every checksum and prev holds, only the id is wrong.
    let prev = '00000000';
    const lines = records.map((r) => {
      const line = encodeRecord({ ...r, prev });
      prev = line.crc;
      return line.bytes;
    });
    writeFileSync(journal, Buffer.concat(lines));
    assert.equal((await validateJournal(journal)).status, { kind: 'clean' }, 'a valid journal');

    const before = dispatchCounts(f.ledger);
    const resumed = await runplan(['run', f.plan], f);
    assert.is(resumed.exitCode, 3, resumed.stderr);
    assert.match(resumed.stderr, /checkpoint_invalid/);
    assert.match(resumed.stderr, /the checkpoint of task a does not match its id \(ffffffffffff vs [0-9a-f]{12}\)/);
    assert.equal(dispatchCounts(f.ledger), before, 'nothing dispatched');
  }),
);

test.run();
