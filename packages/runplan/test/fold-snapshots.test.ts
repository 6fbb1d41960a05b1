// When the coordinator writes its fold snapshot (coordinator/fold-snapshots.ts): from the
// first size on, then each time the journal has grown by half; a resumed run from the size
// of the snapshot it found, or of its journal when it found none; never after the receipt.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalPosition, JournalWriter } from '@runplan/journal';
import { tempDir } from '@runplan/test-fixtures';
import { FoldSnapshots, snapshotSizes } from '../src/coordinator/fold-snapshots.js';
import { readSnapshot, snapshotPath, writeSnapshot } from '../src/events/fold-snapshot.js';
import { RunView } from '../src/events/view.js';
import { smallFs } from './small-fs.js';

const dir = tempDir('fold-snapshots-');
test.after(() => dir.cleanup());

// A writer whose position is whatever the test sets.
function writerAt(position: { value: JournalPosition | undefined }): JournalWriter {
  return { position: () => position.value } as unknown as JournalWriter;
}

const at = (size: number, lastSeq = size): JournalPosition => ({ lastSeq, size, sha256: 'x'.repeat(64) });

// The size the journal's snapshot covers (undefined: none written).
function written(journal: string): number | undefined {
  if (!existsSync(snapshotPath(journal))) return undefined;
  const bytes = readFileSync(snapshotPath(journal));
  return (JSON.parse(bytes.subarray(0, bytes.indexOf(10)).toString('utf8')) as { size: number }).size;
}

test('from the first size on, then each time the journal has grown by half, and only when the writer is at that very record', () => {
  const journal = join(dir.path, 'grow.jsonl');
  const position = { value: at(200) as JournalPosition | undefined };
  const snapshots = new FoldSnapshots(journal, writerAt(position), { RUNPLAN_FOLD_SNAPSHOT_BYTES: '1000' });
  const view = new RunView();
  const step = (size: number): number | undefined => {
    position.value = at(size);
    snapshots.after(view, size);
    return written(journal);
  };
  assert.is(step(999), undefined, 'under the first size');
  position.value = at(1200);
  snapshots.after(view, 1199);
  assert.is(written(journal), undefined, 'the writer is past the record folded');
  assert.is(step(1200), 1200);
  assert.is(step(1799), 1200, 'not yet half again');
  assert.is(step(1800), 1800);
  position.value = undefined;
  snapshots.after(view, 5000);
  assert.is(written(journal), 1800, 'no position (no digest, or a failed write): none');
  position.value = at(9000);
  snapshots.after(undefined, 9000);
  assert.is(written(journal), 1800, 'a fold that missed a record: none');
  view.terminal = { seq: 9001, prev: '00000000', ts: '', type: 'run-complete', data: {}, terminal: true };
  assert.is(step(9001), 1800, 'after the receipt: none');
});

test('a resumed run: half again the snapshot it found, or the journal it opened when it found none; 0 turns them off', () => {
  const journal = join(dir.path, 'resumed.jsonl');
  const env = { RUNPLAN_FOLD_SNAPSHOT_BYTES: '1000' };
  const position = { value: at(4000) as JournalPosition | undefined };
  const step = (snapshots: FoldSnapshots, size: number): number | undefined => {
    position.value = at(size);
    snapshots.after(new RunView(), size);
    return written(journal);
  };
  const none = new FoldSnapshots(journal, writerAt(position), env);
  assert.is(step(none, 5999), undefined, 'no snapshot found: not before the 4000-byte journal grew by half');
  assert.is(step(none, 6000), 6000);

  writeSnapshot(journal, new RunView(), at(2000));
  position.value = at(2500);
  const found = new FoldSnapshots(journal, writerAt(position), env);
  assert.is(step(found, 2999), 2000, 'a 2000-byte snapshot found: not before 3000');
  assert.is(step(found, 3000), 3000);

  rmSync(snapshotPath(journal));
  position.value = at(0);
  const off = new FoldSnapshots(journal, writerAt(position), { RUNPLAN_FOLD_SNAPSHOT_BYTES: '0' });
  assert.is(step(off, 1e9), undefined);
});

test('no snapshot on a file system with less room than twice its size plus 64 MiB: the journal keeps it', () => {
  const small = smallFs(32 * 1024 * 1024);
  try {
    const journal = join(small.path, 'journal.jsonl');
    assert.not.ok(writeSnapshot(journal, new RunView(), at(100)));
    assert.not.ok(existsSync(snapshotPath(journal)));
    assert.equal(readdirSync(small.path), [], 'no temp file left');
    assert.ok(writeSnapshot(join(dir.path, 'roomy.jsonl'), new RunView(), at(100)), 'where there is room, it is written');
  } finally {
    small.cleanup();
  }
});

test('a fold holding what JSON would not give back (NaN, a Map inside a value, a class) is not written; one of another shape is not read', () => {
  const journal = join(dir.path, 'odd.jsonl');
  const cases: Array<[string, (view: RunView) => void]> = [
    ['NaN', (view) => (view.attemptsTotal = Number.NaN)],
    ['a Map inside a value', (view) => view.crashes.set('t', new Map() as unknown as number)],
    ['a class instance', (view) => (view.lastSeen = new Date() as unknown as string)],
  ];
  for (const [what, spoil] of cases) {
    const view = new RunView();
    spoil(view);
    assert.not.ok(writeSnapshot(journal, view, at(100)), what);
    assert.not.ok(existsSync(snapshotPath(journal)), what);
  }
  // The same code's snapshot with one field more (its checksum made to hold) is another shape of fold.
  assert.ok(writeSnapshot(journal, new RunView(), at(100)));
  assert.ok(readSnapshot(journal), 'as written, it is read');
  const bytes = readFileSync(snapshotPath(journal));
  const nl = bytes.indexOf(10);
  const payload = JSON.parse(bytes.subarray(nl + 1).toString('utf8')) as { fields: Record<string, unknown> };
  payload.fields.extra = ['value', 1];
  const changed = Buffer.from(JSON.stringify(payload));
  const meta = { ...JSON.parse(bytes.subarray(0, nl).toString('utf8')), payloadCrc: crc32(changed), payloadBytes: changed.length };
  writeFileSync(snapshotPath(journal), Buffer.concat([Buffer.from(`${JSON.stringify(meta)}\n`), changed]));
  assert.is(readSnapshot(journal), undefined);
});

test('snapshotSizes: where a run whose lines end at these offsets writes them (the bench forges the last)', () => {
  assert.equal(snapshotSizes([500, 1100, 1400, 1700, 2600, 3000], { RUNPLAN_FOLD_SNAPSHOT_BYTES: '1000' }), [
    { index: 1, size: 1100 },
    { index: 3, size: 1700 },
    { index: 4, size: 2600 },
  ]);
  assert.equal(snapshotSizes([500, 1100], { RUNPLAN_FOLD_SNAPSHOT_BYTES: '0' }), []);
});

test.run();
