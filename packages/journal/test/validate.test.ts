// Every way a journal's bytes can go wrong, checked in-process (fast sweeps): a torn tail
// is repairable, everything else is corruption that names its byte offset and seq.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import {
  nodeJournalFs,
  openWriter,
  readJournal,
  repairJournal,
  scanJournal,
  validateJournal,
  type JournalFs,
  type JournalStatus,
} from '../src/index.js';
import { crcOf, lineOf, recordOf, sampleOf, writeSample } from './sample.js';

const dir = tempDir('journal-validate-');
// The sweeps test what is decided, not the disk: skip the syncs (the bin tests sync for real).
const noSync: JournalFs = { ...nodeJournalFs, fsync: async () => {}, fdatasync: async () => {} };
test.after(() => dir.cleanup());

function corrupt(status: JournalStatus, message: string): Extract<JournalStatus, { kind: 'corrupt' }> {
  if (status.kind !== 'corrupt') assert.unreachable(`${message}: expected corrupt, got ${JSON.stringify(status)}`);
  return status as Extract<JournalStatus, { kind: 'corrupt' }>;
}

test(
  'a journal written by the writer is clean, header first, seq contiguous, prev chained',
  withTimeout(10_000, async () => {
    const sample = await writeSample(dir.path, 'clean.jsonl');
    const { records, status } = await readJournal(sample.path);
    assert.equal(status, { kind: 'clean' });
    assert.is(records.length, 5);
    assert.is(records[0]!.type, 'journal-header');
    assert.is(records[0]!.prev, '00000000');
    records.forEach((r, i) => {
      assert.is(r.seq, i);
    });
    for (let i = 1; i < records.length; i++) assert.is(records[i]!.prev, crcOf(sample.lines[i - 1]!));
    assert.equal(await validateJournal(sample.path), { status: { kind: 'clean' }, count: 5, lastSeq: 4, terminal: false, runId: 'sample' });
  }),
);

test(
  'truncation at every byte offset of the last record is a torn tail; repair restores the clean prefix',
  withTimeout(120_000, async () => {
    const sample = await writeSample(dir.path, 'trunc-src.jsonl');
    const last = sample.lines.length - 1;
    const start = sample.offsets[last]!;
    const end = start + sample.lines[last]!.length;
    const path = join(dir.path, 'trunc.jsonl');
    for (let cut = start; cut < end; cut++) {
      rmSync(`${path}.broken`, { force: true });
      const torn = sample.bytes.subarray(0, cut);
      writeFileSync(path, torn);
      const { records, status } = await readJournal(path);
      assert.equal((await validateJournal(path)).status, status, `cut at ${cut}: validation without parsing agrees`);
      assert.is(records.length, last, `cut at ${cut}`);
      if (cut === start) {
        assert.equal(status, { kind: 'clean' }, `cut at ${cut}`);
        continue;
      }
      assert.equal(status, { kind: 'torn_tail', offset: start, detail: 'no_newline' }, `cut at ${cut}`);
      const repaired = await repairJournal(path, { fs: noSync });
      assert.ok(repaired.ok, `repair at ${cut}`);
      assert.equal(repaired.ok && repaired.value, { truncatedAt: start, brokenCopy: `${path}.broken`, droppedBytes: cut - start });
      assert.equal(readFileSync(`${path}.broken`), torn, 'the .broken copy is the file as it was');
      const after = await readJournal(path);
      assert.equal(after.status, { kind: 'clean' }, `after repair at ${cut}`);
      assert.equal(after.records.slice(0, last), records, 'the valid prefix is kept byte for byte');
      assert.is(after.records[last]!.type, 'journal-repaired');
      assert.equal(after.records[last]!.data, { truncatedAt: start, brokenCopy: `${path}.broken`, droppedBytes: cut - start });
    }
  }),
);

test(
  'a group-committed batch cut at any byte leaves whole records then a torn tail, never corruption',
  withTimeout(60_000, async () => {
    const path = join(dir.path, 'batch-src.jsonl');
    const opened = await openWriter(path, { create: true, runId: 'batch' });
    if (!opened.ok) throw new Error(opened.error.message);
    await opened.value.append('before', {});
    const before = readFileSync(path).length;
    // Queued in one tick: one write, one fdatasync.
    await Promise.all([1, 2, 3, 4].map((i) => opened.value.append('batched', { i })));
    await opened.value.close();
    const sample = sampleOf(path);
    const cutPath = join(dir.path, 'batch.jsonl');
    for (let cut = before; cut <= sample.bytes.length; cut++) {
      writeFileSync(cutPath, sample.bytes.subarray(0, cut));
      const { records, status } = await readJournal(cutPath);
      const whole = sample.offsets.filter((o, i) => o + sample.lines[i]!.length <= cut).length;
      assert.is(records.length, whole, `cut at ${cut}`);
      const atBoundary = sample.offsets.includes(cut) || cut === sample.bytes.length;
      assert.equal(
        status,
        atBoundary ? { kind: 'clean' } : { kind: 'torn_tail', offset: sample.offsets[whole]!, detail: 'no_newline' },
        `cut at ${cut}`,
      );
    }
  }),
);

test(
  'every single-byte flip in a middle record and in the last whole record is corruption, never repaired',
  withTimeout(120_000, async () => {
    const sample = await writeSample(dir.path, 'flip-src.jsonl');
    const path = join(dir.path, 'flip.jsonl');
    let checkedRepairs = 0;
    for (const lineIndex of [2, sample.lines.length - 1]) {
      const start = sample.offsets[lineIndex]!;
      for (let at = start; at < start + sample.lines[lineIndex]!.length; at++) {
        for (const mask of [0x01, 0x20, 0x80, 0xff]) {
          const bytes = Buffer.from(sample.bytes);
          bytes[at] = bytes[at]! ^ mask;
          writeFileSync(path, bytes);
          const { records, status } = await readJournal(path);
          const where = `line ${lineIndex} byte ${at - start} mask ${mask}`;
          assert.equal((await validateJournal(path)).status, status, `${where}: validation without parsing agrees`);
          const found = corrupt(status, where);
          assert.ok(records.length <= lineIndex, `${where}: no record from the flipped line is returned`);
          assert.ok(
            found.offset >= sample.offsets[lineIndex - 1]! && found.offset <= start,
            `${where}: offset ${found.offset} names the flipped line`,
          );
          // Repair takes the lock and must refuse without changing a byte (checked on a
          // spread of positions; every position is checked for the verdict above).
          if ((at + mask) % 9 === 0) {
            const repaired = await repairJournal(path, { fs: noSync });
            assert.ok(!repaired.ok && repaired.error.reason === 'corrupt', `${where}: repair refused`);
            assert.equal(readFileSync(path), bytes, `${where}: nothing changed`);
            assert.not.ok(existsSync(`${path}.broken`));
            checkedRepairs += 1;
          }
        }
      }
    }
    assert.ok(checkedRepairs > 40);
  }),
);

test(
  'a zero-filled tail (sectors that never reached the disk) is torn; zeros inside the journal are corruption',
  withTimeout(20_000, async () => {
    const sample = await writeSample(dir.path, 'zero-src.jsonl', 12);
    const path = join(dir.path, 'zero.jsonl');
    const last = sample.lines.length - 1;
    const lastStart = sample.offsets[last]!;
    const check = async (bytes: Buffer, expected: JournalStatus, what: string) => {
      writeFileSync(path, bytes);
      assert.equal((await readJournal(path)).status, expected, what);
    };
    await check(
      Buffer.concat([sample.bytes, Buffer.alloc(700)]),
      { kind: 'torn_tail', offset: sample.bytes.length, detail: 'nul_bytes' },
      'zeros appended',
    );
    const lastZeroed = Buffer.from(sample.bytes);
    lastZeroed.fill(0, lastStart);
    await check(lastZeroed, { kind: 'torn_tail', offset: lastStart, detail: 'nul_bytes' }, 'the last record all zeros');
    // A lost sector in the middle of the last write: zeros from a 512-byte boundary on.
    assert.ok(sample.bytes.length > 1100, 'the sample spans several sectors');
    const boundary = Math.floor((sample.bytes.length - 1) / 512) * 512;
    const lineAtBoundary = sample.offsets.findLastIndex((o) => o <= boundary);
    const sectorLost = Buffer.from(sample.bytes);
    sectorLost.fill(0, boundary);
    await check(
      sectorLost,
      { kind: 'torn_tail', offset: sample.offsets[lineAtBoundary]!, detail: 'nul_bytes' },
      'zeros from a sector boundary to the end',
    );
    // Zeros that do not start where a write or a sector starts are not a crash.
    const midLine = Buffer.from(sample.bytes);
    midLine.fill(0, lastStart + 20);
    const status = corrupt((await (writeFileSync(path, midLine), readJournal(path))).status, 'zeros from mid-line, off a boundary');
    assert.is(status.reason, 'nul_bytes');
    // Zeros inside a middle record followed by good records: corruption.
    const inside = Buffer.from(sample.bytes);
    inside.fill(0, sample.offsets[3]!, sample.offsets[3]! + 10);
    writeFileSync(path, inside);
    const middle = corrupt((await readJournal(path)).status, 'zeros in a middle record');
    assert.is(middle.offset, sample.offsets[3]);
    assert.is(middle.reason, 'nul_bytes');
  }),
);

test(
  'duplicated, missing, reordered and spliced lines are corruption naming offset and seq',
  withTimeout(20_000, async () => {
    const sample = await writeSample(dir.path, 'order-src.jsonl');
    const other = await writeSample(dir.path, 'order-other.jsonl');
    const path = join(dir.path, 'order.jsonl');
    const L = sample.lines;
    const cases: [string, Buffer[], { offsetLine: number; seq: number | null; reason: string }][] = [
      ['duplicate', [L[0]!, L[1]!, L[2]!, L[2]!, L[3]!, L[4]!], { offsetLine: 3, seq: 2, reason: 'seq_repeat' }],
      ['duplicate last', [...L, L[4]!], { offsetLine: 5, seq: 4, reason: 'seq_repeat' }],
      ['gap (deleted line)', [L[0]!, L[1]!, L[3]!, L[4]!], { offsetLine: 2, seq: 3, reason: 'seq_gap' }],
      ['reordered', [L[0]!, L[1]!, L[3]!, L[2]!, L[4]!], { offsetLine: 2, seq: 3, reason: 'seq_gap' }],
      ['header deleted', [L[1]!, L[2]!], { offsetLine: 0, seq: 1, reason: 'no_header' }],
      [
        'a header-shaped first record of another type',
        [lineOf({ ...recordOf(L[0]!), type: 'task-done' }), ...L.slice(1)],
        { offsetLine: 0, seq: 0, reason: 'no_header' },
      ],
      [
        'a header of another format version (a newer or older journal)',
        [lineOf({ ...recordOf(L[0]!), data: { ...recordOf(L[0]!).data, format: 2 } }), ...L.slice(1)],
        { offsetLine: 0, seq: 0, reason: 'bad_header' },
      ],
      [
        'a line whose checksum matches but which is not JSON (made so on purpose)',
        [L[0]!, L[1]!, Buffer.from(`${crc32(Buffer.from('{"seq":2,')).toString(16).padStart(8, '0')} {"seq":2,\n`), L[2]!],
        { offsetLine: 2, seq: null, reason: 'not_json' },
      ],
      ['spliced from another journal', [L[0]!, L[1]!, other.lines[2]!, L[3]!, L[4]!], { offsetLine: 2, seq: 2, reason: 'chain_broken' }],
      ['another journal appended', [...L, ...other.lines], { offsetLine: 5, seq: 0, reason: 'foreign_line' }],
      [
        'a foreign line',
        [L[0]!, L[1]!, Buffer.from('{"seq":2,"hello":"world"}\n'), L[2]!],
        { offsetLine: 2, seq: null, reason: 'foreign_line' },
      ],
    ];
    for (const [what, lines, expected] of cases) {
      writeFileSync(path, Buffer.concat(lines));
      const { status } = await readJournal(path);
      assert.equal((await validateJournal(path)).status, status, `${what}: validation without parsing agrees`);
      const found = corrupt(status, what);
      const offset = lines.slice(0, expected.offsetLine).reduce((n, l) => n + l.length, 0);
      assert.equal([found.offset, found.seq, found.reason], [offset, expected.seq, expected.reason], what);
      const repaired = await repairJournal(path);
      assert.ok(!repaired.ok && repaired.error.reason === 'corrupt', `${what}: repair refuses`);
    }
  }),
);

test(
  'two terminal records, and a record after the terminal one, are corruption',
  withTimeout(10_000, async () => {
    const sample = await writeSample(dir.path, 'term-src.jsonl');
    const path = join(dir.path, 'term.jsonl');
    const lastLine = sample.lines[sample.lines.length - 1]!;
    const t1 = lineOf({ seq: 5, prev: crcOf(lastLine), ts: new Date().toISOString(), type: 'run-complete', data: {}, terminal: true });
    const t2 = lineOf({ seq: 6, prev: crcOf(t1), ts: new Date().toISOString(), type: 'run-failed', data: {}, terminal: true });
    const after = lineOf({ seq: 6, prev: crcOf(t1), ts: new Date().toISOString(), type: 'step-done', data: {} });
    writeFileSync(path, Buffer.concat([sample.bytes, t1]));
    assert.equal(await validateJournal(path), { status: { kind: 'clean' }, count: 6, lastSeq: 5, terminal: true, runId: 'sample' });
    for (const [extra, reason] of [
      [t2, 'second_terminal'],
      [after, 'after_terminal'],
    ] as const) {
      writeFileSync(path, Buffer.concat([sample.bytes, t1, extra]));
      assert.equal((await validateJournal(path)).status, (await readJournal(path)).status);
      const found = corrupt((await readJournal(path)).status, reason);
      assert.equal([found.reason, found.seq, found.offset], [reason, 6, sample.bytes.length + t1.length]);
    }
  }),
);

test(
  'CRLF line endings and a byte order mark (an editor) are named as such',
  withTimeout(10_000, async () => {
    const sample = await writeSample(dir.path, 'editor-src.jsonl');
    const path = join(dir.path, 'editor.jsonl');
    writeFileSync(path, sample.bytes.toString('utf8').replaceAll('\n', '\r\n'));
    assert.equal(corrupt((await readJournal(path)).status, 'crlf').reason, 'crlf');
    writeFileSync(path, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), sample.bytes]));
    const bom = corrupt((await readJournal(path)).status, 'bom');
    assert.equal([bom.reason, bom.offset], ['bom', 0]);
    assert.match(bom.detail, /editor/);
  }),
);

test(
  'a complete last record followed by a stray byte instead of its newline is corruption, a bare complete record is torn',
  withTimeout(10_000, async () => {
    const sample = await writeSample(dir.path, 'nl-src.jsonl');
    const path = join(dir.path, 'nl.jsonl');
    const body = sample.bytes.subarray(0, sample.bytes.length - 1);
    writeFileSync(path, Buffer.concat([body, Buffer.from('x')]));
    assert.is(corrupt((await readJournal(path)).status, 'stray').reason, 'missing_newline');
    writeFileSync(path, body);
    assert.equal((await readJournal(path)).status, { kind: 'torn_tail', offset: sample.offsets.at(-1)!, detail: 'no_newline' });
  }),
);

test(
  'an oversized line is corruption; an empty file is a torn (headerless) journal',
  withTimeout(10_000, async () => {
    const sample = await writeSample(dir.path, 'big-src.jsonl');
    const path = join(dir.path, 'big.jsonl');
    const huge = lineOf({ seq: 5, prev: crcOf(sample.lines.at(-1)!), ts: 'x', type: 'big', data: { blob: 'a'.repeat(1 << 20) } });
    writeFileSync(path, Buffer.concat([sample.bytes, huge, sample.lines[1]!]));
    const found = corrupt((await readJournal(path)).status, 'huge');
    assert.equal([found.reason, found.offset], ['record_too_large', sample.bytes.length]);
    writeFileSync(path, '');
    assert.equal((await readJournal(path)).status, { kind: 'torn_tail', offset: 0, detail: 'empty' });
    assert.equal(recordOf(sample.lines[0]!).data['runId'], 'sample');
  }),
);

test(
  "lines that straddle the scan's read boundaries are checked whole: clean, and a flip or a gap there is named at its line",
  withTimeout(60_000, async () => {
    // ~6 MiB of records of uneven sizes (up to ~600 KiB): every 64 KiB multiple up to there
    // falls inside some line, whatever size the scan reads in.
    const path = join(dir.path, 'straddle-src.jsonl');
    const opened = await openWriter(path, { create: true, runId: 'straddle', fs: noSync });
    if (!opened.ok) throw new Error(opened.error.message);
    for (let i = 1; i <= 60; i++) await opened.value.append('padded', { i, pad: 'p'.repeat((i * 7919) % (600 * 1024)) });
    await opened.value.close();
    const sample = sampleOf(path);
    assert.ok(sample.bytes.length > 6 * 2 ** 20, 'the journal spans several reads');
    const { records, status } = await readJournal(path);
    assert.equal(status, { kind: 'clean' });
    assert.is(records.length, 61);
    assert.equal(
      records.map((r) => r.seq),
      records.map((_, i) => i),
    );
    assert.equal(await validateJournal(path), { status: { kind: 'clean' }, count: 61, lastSeq: 60, terminal: false, runId: 'straddle' });

    const broken = join(dir.path, 'straddle.jsonl');
    for (const boundary of [2 ** 18, 2 ** 19, 2 ** 20, 2 ** 21, 2 ** 22]) {
      const line = sample.offsets.findLastIndex((o) => o <= boundary);
      const start = sample.offsets[line]!;
      assert.ok(start < boundary && boundary < start + sample.lines[line]!.length - 1, `a line straddles ${boundary}`);
      // A byte flipped just past the boundary, inside that line.
      const flipped = Buffer.from(sample.bytes);
      flipped[boundary + 1] = flipped[boundary + 1]! ^ 0x01;
      writeFileSync(broken, flipped);
      for (const read of [(await readJournal(broken)).status, (await validateJournal(broken)).status]) {
        const found = corrupt(read, `flip at ${boundary + 1}`);
        assert.equal([found.reason, found.offset, found.seq], ['crc_mismatch', start, line], `flip at ${boundary + 1}`);
      }
      // The straddling line dropped: the next one is a gap at the dropped line's offset.
      writeFileSync(broken, Buffer.concat([sample.bytes.subarray(0, start), sample.bytes.subarray(start + sample.lines[line]!.length)]));
      for (const read of [(await readJournal(broken)).status, (await validateJournal(broken)).status]) {
        const found = corrupt(read, `line ${line} dropped`);
        assert.equal([found.reason, found.offset, found.seq], ['seq_gap', start, line + 1], `line ${line} dropped`);
      }
    }
  }),
);

test(
  'scanJournal parseTypes: only the header and the named types are parsed and handed out; every other line is still checked',
  withTimeout(10_000, async () => {
    const path = join(dir.path, 'types.jsonl');
    const opened = await openWriter(path, { create: true, runId: 'types', fs: noSync });
    if (!opened.ok) throw new Error(opened.error.message);
    for (let i = 1; i <= 6; i++) await opened.value.append(i % 3 === 0 ? 'usage' : 'step-done', { i });
    await opened.value.appendTerminal('run-complete', { ok: true });
    await opened.value.close();
    const types = new Set(['usage', 'run-complete']);
    const seen: string[] = [];
    const scan = await scanJournal(path, { parseTypes: types, onRecord: (r) => seen.push(`${r.seq}:${r.type}`) });
    assert.equal(seen, ['0:journal-header', '3:usage', '6:usage', '7:run-complete']);
    assert.equal([scan.status, scan.count, scan.lastSeq, scan.terminal], [{ kind: 'clean' }, 8, 7, true]);

    const sample = sampleOf(path);
    const broken = join(dir.path, 'types-broken.jsonl');
    // A byte flipped in a line of a type not parsed: still a checksum mismatch at that line.
    const flipped = Buffer.from(sample.bytes);
    flipped[sample.offsets[2]! + 20] = flipped[sample.offsets[2]! + 20]! ^ 0x01;
    writeFileSync(broken, flipped);
    const found = corrupt((await scanJournal(broken, { parseTypes: types, onRecord: () => {} })).status, 'flip');
    assert.equal([found.reason, found.offset, found.seq], ['crc_mismatch', sample.offsets[2], 2]);
    // A line dropped between two unparsed ones: a seq gap where it was.
    writeFileSync(broken, Buffer.concat([sample.bytes.subarray(0, sample.offsets[4]), sample.bytes.subarray(sample.offsets[5])]));
    const gap = corrupt((await scanJournal(broken, { parseTypes: types, onRecord: () => {} })).status, 'gap');
    assert.equal([gap.reason, gap.offset], ['seq_gap', sample.offsets[4]]);
    // A valid checksum over a malformed record of a parsed type is bad_record, as readJournal says.
    const bad = lineOf({ seq: 3, prev: crcOf(sample.lines[2]!), ts: recordOf(sample.lines[3]!).ts, type: 'usage', data: { i: 3 } });
    const forged = Buffer.from(bad.toString('latin1').replace('"data":{"i":3}', '"data":{"i":3},"extra":1').slice(9), 'latin1');
    const { crc32 } = await import('node:zlib');
    const line = Buffer.concat([Buffer.from(`${crc32(forged.subarray(0, -1)).toString(16).padStart(8, '0')} `), forged]);
    writeFileSync(broken, Buffer.concat([sample.bytes.subarray(0, sample.offsets[3]), line, sample.bytes.subarray(sample.offsets[4])]));
    const shape = corrupt((await scanJournal(broken, { parseTypes: types, onRecord: () => {} })).status, 'shape');
    assert.equal([shape.reason, shape.offset], ['bad_record', sample.offsets[3]]);
  }),
);

test.run();
