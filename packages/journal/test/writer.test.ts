// The writer through its library API: durability before resolve, group commit, poisoning,
// terminal rules, size cap, repair on open, refusals of corrupt journals and bad paths.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import {
  encodeRecord,
  isLockHeld,
  JournalFailure,
  newRunId,
  nodeJournalFs,
  openWriter,
  readHeader,
  readJournal,
  repairJournal,
  scanJournal,
  type JournalEvent,
  type JournalFs,
  type JournalWriter,
} from '../src/index.js';
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { recordingFs, writeSample } from './sample.js';

const dir = tempDir('journal-writer-');
test.after(() => dir.cleanup());

async function open(path: string, options: Parameters<typeof openWriter>[1] = {}): Promise<JournalWriter> {
  const opened = await openWriter(path, options);
  if (!opened.ok) throw new Error(`${opened.error.reason}: ${opened.error.message}`);
  return opened.value;
}

async function rejection(promise: Promise<unknown>): Promise<JournalFailure> {
  try {
    await promise;
  } catch (e) {
    assert.instance(e, JournalFailure);
    return e as JournalFailure;
  }
  throw new Error('expected a rejection');
}

// Run ids name runs and make the ownerTag prefix every process of a run carries: runs of any
// slug started in the same second must not share one.
test('newRunId: the start second and 32 random bits', () => {
  const at = new Date('2026-12-01T12:00:00.500Z');
  const ids = Array.from({ length: 50 }, () => newRunId(at));
  for (const id of ids) assert.match(id, /^20261201T120000Z-[0-9a-f]{8}$/);
  assert.is(new Set(ids).size, ids.length);
});

test(
  'every line the writer appends is, byte for byte, encodeRecord of the record it resolved with (multi-byte text, terminal included)',
  withTimeout(20_000, async () => {
    const path = join(dir.path, 'bytes.jsonl');
    const writer = await open(path, { create: true, runId: 'bytes' });
    const records = [
      await writer.append('tick', { note: 'caf\u00e9 \u2014 \u{1f600}', n: 1 }),
      ...(await Promise.all([writer.append('tick', { quote: '"\\\n' }), writer.append('tick', { nested: { a: [1, null, true] } })])),
      await writer.appendTerminal('done', { ok: true }),
    ];
    await writer.close();
    const lines = readFileSync(path).toString('utf8').split('\n').slice(1, -1);
    assert.equal(
      lines,
      records.map((r) => encodeRecord(r).bytes.toString('utf8').slice(0, -1)),
    );
    const back = await readJournal(path);
    assert.is(back.status.kind, 'clean');
    assert.equal(back.records.slice(1), records, 'and reads back as the same records');
  }),
);

test(
  "headerFields go into the header (read back by readHeader and scanJournal); the journal's own keys are refused",
  withTimeout(20_000, async () => {
    const path = join(dir.path, 'fields.jsonl');
    const writer = await open(path, { create: true, runId: 'fields', headerFields: { startOrder: 7 } });
    await writer.append('tick', {});
    await writer.close();
    const read = await readHeader(path);
    assert.ok(read, 'a header');
    assert.is(read!.header.runId, 'fields');
    assert.is(read!.header['startOrder'], 7);
    assert.match(read!.ts, /^\d{4}-\d{2}-\d{2}T.*Z$/);
    assert.is((await scanJournal(path)).header?.['startOrder'], 7);
    for (const key of ['runId', 'salt', 'format']) {
      const refused = await openWriter(join(dir.path, `reserved-${key}.jsonl`), { create: true, headerFields: { [key]: 'x' } });
      assert.not.ok(refused.ok);
      if (!refused.ok) assert.is(refused.error.reason, 'bad_record');
      assert.not.ok(existsSync(join(dir.path, `reserved-${key}.jsonl`)), 'nothing created');
    }
  }),
);

test(
  'readHeader is undefined for an empty journal, a torn header line and a header whose checksum fails',
  withTimeout(20_000, async () => {
    const empty = join(dir.path, 'h-empty.jsonl');
    writeFileSync(empty, '');
    assert.is(await readHeader(empty), undefined);
    const good = join(dir.path, 'h-good.jsonl');
    await (await open(good, { create: true, runId: 'h' })).close();
    const line = readFileSync(good, 'utf8');
    const torn = join(dir.path, 'h-torn.jsonl');
    writeFileSync(torn, line.slice(0, -1));
    assert.is(await readHeader(torn), undefined);
    const flipped = join(dir.path, 'h-crc.jsonl');
    writeFileSync(flipped, line.replace('"runId":"h"', '"runId":"x"'));
    assert.is(await readHeader(flipped), undefined);
    assert.is((await readHeader(good))?.header.runId, 'h');
  }),
);

test(
  'each append resolves only after an fdatasync that followed its write; concurrent appends share one',
  withTimeout(20_000, async () => {
    const { fs, log } = recordingFs();
    const writer = await open(join(dir.path, 'sync.jsonl'), { create: true, runId: 'sync', fs });
    log.length = 0;
    const appended = await Promise.all(
      Array.from({ length: 50 }, (_, i) => writer.append('tick', { i }).then((r) => (log.push({ op: 'resolved', seq: r.seq }), r))),
    );
    for (const record of appended) {
      const resolvedAt = log.findIndex((e) => e.op === 'resolved' && e.seq === record.seq);
      const writtenAt = log.findIndex((e) => e.op === 'write' && e.bytes.includes(`{"seq":${record.seq},`));
      assert.ok(writtenAt >= 0 && writtenAt < resolvedAt, `seq ${record.seq} was written before it resolved`);
      const synced = log.slice(writtenAt, resolvedAt).some((e) => e.op === 'fdatasync' && e.done);
      assert.ok(synced, `seq ${record.seq}: an fdatasync returned between its write and its resolve`);
    }
    const syncs = log.filter((e) => e.op === 'fdatasync' && e.done).length;
    assert.ok(syncs >= 1 && syncs <= 3, `group commit: 50 concurrent appends took ${syncs} fdatasyncs`);
    // One at a time, every append pays its own fdatasync.
    log.length = 0;
    for (let i = 0; i < 5; i++) await writer.append('tick', { i });
    assert.is(log.filter((e) => e.op === 'fdatasync' && e.done).length, 5);
    assert.is(writer.lastSeq, 55);
    await writer.close();
  }),
);

test(
  'a write error poisons the writer: that append and every later one fail with the original error',
  withTimeout(10_000, async () => {
    let armed = false;
    const { fs, writeCount } = recordingFs({
      failWrite: () => (armed ? Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }) : undefined),
    });
    const path = join(dir.path, 'poison.jsonl');
    const writer = await open(path, { create: true, runId: 'poison', fs });
    await writer.append('ok', {});
    armed = true;
    const first = await rejection(writer.append('lost', {}));
    assert.equal([first.reason, first.error.reason === 'io_error' && first.error.code], ['io_error', 'EIO']);
    armed = false;
    const writes = writeCount();
    const later = await rejection(writer.append('after', {}));
    assert.is(later, first, 'the very same failure');
    assert.is(await rejection(writer.appendTerminal('run-failed', {})), first);
    assert.is(writeCount(), writes, 'a poisoned writer never writes again');
    await writer.close();
    assert.not.ok(await isLockHeld(path));
    const { records, status } = await readJournal(path);
    assert.equal(status, { kind: 'clean' });
    assert.equal(
      records.map((r) => r.type),
      ['journal-header', 'ok'],
    );
  }),
);

test(
  'a short write then EFBIG (a file size limit) poisons; the file holds every acknowledged record',
  withTimeout(10_000, async () => {
    let limit = Infinity;
    const path = join(dir.path, 'efbig.jsonl');
    const base = recordingFs();
    const fs = {
      ...base.fs,
      async write(fd: number, buffer: Buffer, offset: number, length: number) {
        if (limit <= 0) throw Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG' });
        const n = Math.min(length, limit);
        limit -= n;
        return base.fs.write(fd, buffer, offset, n);
      },
    };
    const writer = await open(path, { create: true, runId: 'efbig', fs });
    const acked = await writer.append('ok', { n: 1 });
    limit = 30;
    const failure = await rejection(writer.append('partial', { n: 2 }));
    assert.is(failure.error.reason === 'io_error' && failure.error.code, 'EFBIG');
    await rejection(writer.append('more', {}));
    await writer.close();
    const { records, status } = await readJournal(path);
    assert.is(status.kind, 'torn_tail');
    assert.is(records.at(-1)!.seq, acked.seq);
  }),
);

test(
  'one terminal record, nothing after it, also after reopening',
  withTimeout(10_000, async () => {
    const path = join(dir.path, 'terminal.jsonl');
    const writer = await open(path, { create: true, runId: 'term' });
    const done = await writer.appendTerminal('run-complete', { ok: true });
    assert.is(done.terminal, true);
    assert.ok(writer.terminal);
    assert.is((await rejection(writer.appendTerminal('run-failed', {}))).reason, 'terminal');
    assert.is((await rejection(writer.append('late', {}))).reason, 'terminal');
    await writer.close();
    const again = await open(path);
    assert.ok(again.terminal);
    assert.is((await rejection(again.append('late', {}))).reason, 'terminal');
    await again.close();
    assert.is((await readJournal(path)).records.length, 2);
  }),
);

test(
  'records over 1 MiB, bad types and the reserved header type are refused without poisoning',
  withTimeout(10_000, async () => {
    const path = join(dir.path, 'limits.jsonl');
    const writer = await open(path, { create: true, runId: 'limits' });
    const big = await rejection(writer.append('big', { blob: 'x'.repeat(1 << 20) }));
    assert.is(big.reason, 'record_too_large');
    assert.match(big.message, /1048576-byte limit/);
    assert.is((await rejection(writer.append('has space', {}))).reason, 'bad_record');
    assert.is((await rejection(writer.append('journal-header', {}))).reason, 'bad_record');
    assert.is((await rejection(writer.append('x', [] as unknown as Record<string, unknown>))).reason, 'bad_record');
    assert.is((await rejection(writer.append('x', { n: 10n as unknown as number }))).reason, 'bad_record');
    const fine = await writer.append('fine', { blob: 'x'.repeat(1000) });
    assert.is(fine.seq, 1, 'refused records used no seq');
    await writer.close();
    assert.equal((await readJournal(path)).status, { kind: 'clean' });
  }),
);

test(
  'opening a journal with a torn tail repairs it, keeps .broken, and journals that it did',
  withTimeout(10_000, async () => {
    const sample = await writeSample(dir.path, 'torn.jsonl');
    writeFileSync(sample.path, Buffer.concat([sample.bytes, Buffer.from('0badf00d {"seq":5,"pr')]));
    const events: JournalEvent[] = [];
    const writer = await open(sample.path, { onEvent: (e) => events.push(e) });
    assert.equal(writer.repaired, { truncatedAt: sample.bytes.length, brokenCopy: `${sample.path}.broken`, droppedBytes: 21 });
    assert.ok(events.some((e) => e.type === 'journal-repaired'));
    await writer.append('next', {});
    await writer.close();
    const { records, status } = await readJournal(sample.path);
    assert.equal(status, { kind: 'clean' });
    assert.equal(
      records.slice(5).map((r) => [r.seq, r.type]),
      [
        [5, 'journal-repaired'],
        [6, 'next'],
      ],
    );
    assert.is(readFileSync(`${sample.path}.broken`).length, sample.bytes.length + 21);
  }),
);

// A JournalFs that logs every open, fsync, fdatasync and ftruncate by the path of its fd.
function pathLoggingFs() {
  const paths = new Map<number, string>();
  const log: string[] = [];
  const fs: JournalFs = {
    ...nodeJournalFs,
    async open(path, flags, mode) {
      const fd = await nodeJournalFs.open(path, flags, mode);
      paths.set(fd, path);
      return fd;
    },
    async fsync(fd) {
      await nodeJournalFs.fsync(fd);
      log.push(`fsync ${paths.get(fd)}`);
    },
    async fdatasync(fd) {
      await nodeJournalFs.fdatasync(fd);
      log.push(`fdatasync ${paths.get(fd)}`);
    },
    async ftruncate(fd, length) {
      await nodeJournalFs.ftruncate(fd, length);
      log.push(`ftruncate ${paths.get(fd)} ${length}`);
    },
  };
  return { fs, log };
}

test(
  'creating a journal syncs its header, then its directory; repair syncs the cut file and the directory of the .broken copy',
  withTimeout(10_000, async () => {
    const sub = join(dir.path, 'durable');
    mkdirSync(sub);
    const file = join(sub, 'j.jsonl');
    const created = pathLoggingFs();
    const writer = await open(file, { create: true, runId: 'd', fs: created.fs });
    await writer.close();
    const headerSync = created.log.findIndex((line) => /^fdatasync .*\.j\.jsonl\..*\.tmp$/.test(line));
    const dirSync = created.log.indexOf(`fsync ${sub}`);
    assert.ok(headerSync >= 0, `the header is synced before it is linked into place: ${created.log.join(' | ')}`);
    assert.ok(dirSync > headerSync, `the directory is synced after the journal appears in it: ${created.log.join(' | ')}`);

    const whole = readFileSync(file);
    writeFileSync(file, Buffer.concat([whole, Buffer.from('0badf00d {"seq":1,"pr')]));
    const repaired = pathLoggingFs();
    const result = await repairJournal(file, { fs: repaired.fs });
    assert.ok(result.ok);
    const cut = repaired.log.indexOf(`ftruncate ${file} ${whole.length}`);
    assert.ok(cut >= 0, repaired.log.join(' | '));
    assert.ok(repaired.log.indexOf(`fsync ${file}`, cut) > cut, `the cut is synced: ${repaired.log.join(' | ')}`);
    const copied = repaired.log.indexOf(`fsync ${sub}`);
    assert.ok(copied >= 0 && copied < cut, `the .broken copy is durable before the journal is cut: ${repaired.log.join(' | ')}`);
  }),
);

test(
  'opening a corrupt journal is refused, changes nothing, and releases the lock',
  withTimeout(10_000, async () => {
    const sample = await writeSample(dir.path, 'corrupt.jsonl');
    const bytes = Buffer.from(sample.bytes);
    bytes[sample.offsets[2]! + 20] = 0x7a;
    writeFileSync(sample.path, bytes);
    const opened = await openWriter(sample.path, {});
    assert.ok(!opened.ok && opened.error.reason === 'corrupt');
    if (!opened.ok && opened.error.reason === 'corrupt') {
      assert.equal(opened.error.status.kind === 'corrupt' && [opened.error.status.offset, opened.error.status.seq], [sample.offsets[2], 2]);
      assert.match(opened.error.message, /crc_mismatch/);
    }
    assert.equal(readFileSync(sample.path), bytes);
    assert.not.ok(await isLockHeld(sample.path));
    assert.not.ok(existsSync(`${sample.path}.broken`));
  }),
);

test(
  'bad paths are refused before anything is created (F10)',
  withTimeout(10_000, async () => {
    const sub = join(dir.path, 'paths');
    mkdirSync(sub);
    for (const path of ['', join(sub, 'undefined'), join(sub, 'undefined.db'), join(sub, 'missing-dir', 'j.jsonl'), sub, `${sub}/`]) {
      const opened = await openWriter(path, { create: true });
      assert.ok(!opened.ok && opened.error.reason === 'bad_path', `${path}: ${JSON.stringify(opened)}`);
    }
    assert.equal(readdirSync(sub), []);
    const missing = await openWriter(join(sub, 'j.jsonl'), {});
    assert.ok(!missing.ok && missing.error.reason === 'missing', 'create is opt-in');
    assert.equal(readdirSync(sub), []);
    const badId = await openWriter(join(sub, 'j.jsonl'), { create: true, runId: '../x' });
    assert.ok(!badId.ok && badId.error.reason === 'bad_run_id');
    const mine = await open(join(sub, 'j.jsonl'), { create: true, runId: 'run-a' });
    await mine.close();
    const theirs = await openWriter(join(sub, 'j.jsonl'), { create: true, runId: 'run-b' });
    assert.ok(!theirs.ok && theirs.error.reason === 'bad_run_id', 'another run id never continues this journal');
    if (!theirs.ok) assert.match(theirs.error.message, /records run run-a, not run-b/);
  }),
);

test(
  'create + exclusive refuses an existing journal; a second writer in the same process is refused, then waits',
  withTimeout(10_000, async () => {
    const path = join(dir.path, 'excl.jsonl');
    const first = await open(path, { create: true, exclusive: true, runId: 'one' });
    assert.is(first.runId, 'one');
    const refused = await openWriter(path, {});
    assert.ok(!refused.ok && refused.error.reason === 'lock_held');
    if (!refused.ok && refused.error.reason === 'lock_held') assert.is(refused.error.holder?.pid, process.pid);
    const waiting = openWriter(path, { waitMs: 20_000 });
    setTimeout(() => void first.close(), 100);
    const second = await waiting;
    assert.ok(second.ok, 'the waiter got the lock once the first closed');
    if (second.ok) await second.value.close();
    const exists = await openWriter(path, { create: true, exclusive: true, runId: 'two' });
    assert.ok(!exists.ok && exists.error.reason === 'exists');
    assert.not.ok(existsSync(`${path}.lock.json`), 'close removes the identity file');
    assert.not.ok(await isLockHeld(path));
  }),
);

test(
  'scanJournal with digest: the sha256 of the bytes on a clean journal, none on a torn tail or corruption',
  withTimeout(10_000, async () => {
    const sample = await writeSample(dir.path, 'digest.jsonl', 6);
    const clean = await scanJournal(sample.path, { digest: true });
    assert.is(clean.status.kind, 'clean');
    assert.is(clean.sha256, createHash('sha256').update(sample.bytes).digest('hex'));
    assert.is((await scanJournal(sample.path)).sha256, undefined);
    writeFileSync(join(dir.path, 'digest-torn.jsonl'), sample.bytes.subarray(0, sample.bytes.length - 5));
    const torn = await scanJournal(join(dir.path, 'digest-torn.jsonl'), { digest: true });
    assert.is(torn.status.kind, 'torn_tail');
    assert.is(torn.sha256, undefined);
    const flipped = Buffer.from(sample.bytes);
    flipped[sample.offsets[2]! + 20]! ^= 0x01;
    writeFileSync(join(dir.path, 'digest-corrupt.jsonl'), flipped);
    const corrupt = await scanJournal(join(dir.path, 'digest-corrupt.jsonl'), { digest: true, parse: true });
    assert.is(corrupt.status.kind, 'corrupt');
    assert.is(corrupt.sha256, undefined);
  }),
);

test(
  "openWriter({ scanned }) takes the caller's scan only for the very bytes it checked; a changed file is scanned in full",
  withTimeout(20_000, async () => {
    // Unchanged: the caller's result is used as it is (a tampered lastSeq shows it was not rescanned).
    const same = await writeSample(dir.path, 'scanned-same.jsonl', 3);
    const scanned = await scanJournal(same.path, { digest: true, parse: true });
    const w1 = await open(same.path, { scanned });
    assert.is(w1.lastSeq, 3);
    assert.is((await w1.append('next', {})).seq, 4);
    await w1.close();
    assert.is((await readJournal(same.path)).status.kind, 'clean');
    const reused = await open(same.path, { scanned: { ...(await scanJournal(same.path, { digest: true })), lastSeq: 41 } });
    assert.is(reused.lastSeq, 41);
    await reused.close();

    // The same size but one byte changed after the scan: the writer scans and refuses it.
    const edited = await writeSample(dir.path, 'scanned-edited.jsonl', 3);
    const before = await scanJournal(edited.path, { digest: true });
    const bytes = Buffer.from(edited.bytes);
    bytes[edited.offsets[1]! + 15]! ^= 0x01;
    writeFileSync(edited.path, bytes);
    const refused = await openWriter(edited.path, { scanned: before });
    assert.is(refused.ok, false);
    if (!refused.ok) assert.is(refused.error.reason, 'corrupt');

    // Grown after the scan (another writer appended): scanned in full, the chain continues.
    const grown = await writeSample(dir.path, 'scanned-grown.jsonl', 3);
    const early = await scanJournal(grown.path, { digest: true });
    const other = await open(grown.path);
    await other.append('from-another-writer', {});
    await other.close();
    const w2 = await open(grown.path, { scanned: early });
    assert.is(w2.lastSeq, 4);
    assert.is((await w2.append('next', {})).seq, 5);
    await w2.close();
    assert.is((await readJournal(grown.path)).status.kind, 'clean');

    // A scan that saw a torn tail is never taken: the writer repairs from its own scan.
    const torn = await writeSample(dir.path, 'scanned-torn.jsonl', 3);
    appendFileSync(torn.path, '0123abcd {"seq":4,"pr');
    const tornScan = await scanJournal(torn.path, { digest: true });
    assert.is(tornScan.status.kind, 'torn_tail');
    const w3 = await open(torn.path, { scanned: tornScan });
    assert.ok(w3.repaired);
    await w3.close();
    assert.is((await readJournal(torn.path)).status.kind, 'clean');
  }),
);

test.run();
