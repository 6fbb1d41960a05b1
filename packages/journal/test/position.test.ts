// What a fold snapshot rests on: the writer's position() (the sha256 of exactly the durable
// bytes, kept as it writes them) and scanJournal's `from` (the prefix checked but not parsed,
// and its sha256), through the library API.
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from '@runplan/test-fixtures';
import { openWriter, scanJournal, type JournalRecord, type JournalWriter } from '../src/index.js';
import { lineOf, sampleOf, writeSample } from './sample.js';

const dir = tempDir('journal-position-');
test.after(() => dir.cleanup());

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

async function open(path: string, options: Parameters<typeof openWriter>[1] = {}): Promise<JournalWriter> {
  const opened = await openWriter(path, options);
  if (!opened.ok) throw new Error(`${opened.error.reason}: ${opened.error.message}`);
  return opened.value;
}

test('position(): with digest, the durable bytes hash to what the file holds, after every append and across a reopen', async () => {
  const path = join(dir.path, 'grow.jsonl');
  const w = await open(path, { create: true, runId: 'grow', digest: true });
  const atStart = w.position();
  assert.ok(atStart);
  assert.equal(atStart, { lastSeq: 0, size: readFileSync(path).length, sha256: sha256(readFileSync(path)) });
  for (let i = 1; i <= 5; i++) {
    await w.append('step-done', { i });
    assert.equal(w.position(), { lastSeq: i, size: readFileSync(path).length, sha256: sha256(readFileSync(path)) });
  }
  // Appends queued together (one write): the position is of the whole batch once it is durable.
  await Promise.all([w.append('step-done', { i: 6 }), w.append('step-done', { i: 7 }), w.append('step-done', { i: 8 })]);
  assert.equal(w.position(), { lastSeq: 8, size: readFileSync(path).length, sha256: sha256(readFileSync(path)) });
  await w.close();

  // Reopened from the caller's digested scan, and from a scan of its own.
  const scanned = await scanJournal(path, { digest: true });
  const again = await open(path, { scanned, digest: true });
  await again.append('step-done', { i: 9 });
  assert.equal(again.position(), { lastSeq: 9, size: readFileSync(path).length, sha256: sha256(readFileSync(path)) });
  await again.close();
  const third = await open(path, { digest: true });
  assert.equal(third.position(), { lastSeq: 9, size: readFileSync(path).length, sha256: sha256(readFileSync(path)) });
  await third.close();
});

test('position(): undefined without digest, and after a torn tail was cut off (the hash would be of other bytes)', async () => {
  const plain = await writeSample(dir.path, 'plain.jsonl', 2);
  const w = await open(plain.path);
  assert.is(w.position(), undefined);
  await w.close();

  const torn = await writeSample(dir.path, 'torn.jsonl', 2);
  // Half of the next line, as a crash mid-append leaves it.
  const next = lineOf({ seq: 3, prev: torn.lines[2]!.toString('latin1', 0, 8), ts: new Date().toISOString(), type: 'step-done', data: {} });
  appendFileSync(torn.path, next.subarray(0, 30));
  const repaired = await open(torn.path, { digest: true });
  assert.ok(repaired.repaired, 'the torn tail was repaired');
  assert.is(repaired.position(), undefined);
  await repaired.close();
});

test('scanJournal({ from }): lines before it are checked but not handed on; prefixSha256 is the sha256 of the bytes before it', async () => {
  const s = await writeSample(dir.path, 'from.jsonl', 6);
  const cut = s.offsets[4]!;
  const seen: number[] = [];
  const scan = await scanJournal(s.path, { from: cut, digest: true, onRecord: (r: JournalRecord) => seen.push(r.seq) });
  assert.equal(seen, [4, 5, 6], 'only the records from the offset on');
  assert.is(scan.status.kind, 'clean');
  assert.is(scan.count, 7);
  assert.is(scan.header?.runId, 'sample', 'the header is still read');
  assert.is(scan.prefixSha256, sha256(s.bytes.subarray(0, cut)));
  assert.is(scan.sha256, sha256(s.bytes), 'the whole file is hashed as well');
  // Without digest the prefix is hashed on its own; past the end there is no prefix digest.
  assert.is((await scanJournal(s.path, { from: cut })).prefixSha256, sha256(s.bytes.subarray(0, cut)));
  assert.is((await scanJournal(s.path, { from: s.bytes.length + 1 })).prefixSha256, undefined);
});

test('scanJournal({ from }): a bad line before the offset is still found (checksum, then a line from another journal)', async () => {
  const s = await writeSample(dir.path, 'from-bad.jsonl', 6);
  const bytes = Buffer.from(s.bytes);
  const second = s.offsets[2]!;
  bytes[second + 12] = bytes[second + 12] === 0x31 ? 0x32 : 0x31;
  writeFileSync(s.path, bytes);
  const seen: number[] = [];
  const scan = await scanJournal(s.path, { from: s.offsets[5]!, onRecord: (r: JournalRecord) => seen.push(r.seq) });
  assert.is(scan.status.kind, 'corrupt');
  assert.is(scan.status.kind === 'corrupt' && scan.status.offset, second);
  assert.equal(seen, []);

  // A record whose checksum is right but whose prev chains to another journal.
  const other = await writeSample(dir.path, 'from-chain.jsonl', 6);
  const foreign = lineOf({ seq: 3, prev: '00000000', ts: new Date().toISOString(), type: 'step-done', data: { i: 3 } });
  writeFileSync(other.path, Buffer.concat([...other.lines.slice(0, 3), foreign, ...other.lines.slice(4)]));
  const chained = await scanJournal(sampleOf(other.path).path, { from: other.offsets[5]! });
  assert.is(chained.status.kind === 'corrupt' && chained.status.reason, 'chain_broken');
});

test.run();
