// The journal bin as a user meets it: exit codes, messages, locks between processes,
// file size limits and concurrent appenders.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bootId, processIdentity } from '@runplan/settle';
import { binPath, inHangingTerminal, parseJsonLines, runBin, shFixture, tempDir, waitUntil, withTimeout } from '@runplan/test-fixtures';
import { isLockHeld, readJournal, validateJournal } from '../src/index.js';
import { crcOf, recordOf, writeSample } from './sample.js';
import { crcHex } from '../src/format.js';
import type { JournalRecord } from '../src/index.js';

const bin = binPath('journal');
const dir = tempDir('journal-cli-');
test.after(() => dir.cleanup());
let n = 0;
const fresh = (name = 'j') => join(dir.path, `${name}-${++n}.jsonl`);
const journal = (args: string[], input?: string) => runBin(bin, args, input === undefined ? {} : { input });

interface Holder {
  child: ChildProcess;
  pid: number;
  exited: Promise<unknown>;
}

const holders: ChildProcess[] = [];
// A failed assertion must not leave a holder (stopped, even) behind.
test.after.each(() => {
  for (const child of holders.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      child.kill('SIGCONT');
    }
  }
});

// A `journal append` that holds the writer lock while its stdin stays open; resolves
// once its first record is durable (it printed the seq), so it surely holds the lock.
async function spawnHolder(file: string): Promise<Holder> {
  const child = spawn(process.execPath, [bin, 'append', file, '--type', 'hold', '--wait', '30s'], { stdio: ['pipe', 'pipe', 'pipe'] });
  holders.push(child);
  const exited = once(child, 'exit');
  child.stdin!.on('error', () => {});
  child.stdin!.write('{"hold":1}\n');
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`holder exited ${code} before holding the lock`)));
  });
  return { child, pid: child.pid!, exited };
}

test(
  '--help lists the commands and every exit code; usage errors exit 2 with one line, no stack',
  withTimeout(180_000, async () => {
    const help = await journal(['--help']);
    assert.is(help.exitCode, 0);
    for (const word of ['init', 'append', 'cat', 'validate', 'repair', 'holder', 'Exit codes']) assert.match(help.stdout, word);
    for (const code of [0, 1, 2, 3, 4]) assert.match(help.stdout, new RegExp(`^  ${code}  `, 'm'));
    for (const args of [
      [],
      ['frobnicate'],
      ['append', fresh(), '--type', 'x', '--bogus'],
      ['append', fresh()],
      ['init', fresh()],
      ['init', fresh(), '--run-id', 'a', '--run-id', 'b'],
      ['append', fresh(), '--type', 'x', '--wait', '10'],
      ['cat', fresh(), '--since', '1', '--since', '2'],
      ['append', fresh(), '--type', 'x', '--data', '{}', '--wait', '1s', '--wait=2s'],
      ['repair', fresh(), '--wait', '1s', '--wait', '2s'],
    ]) {
      const result = await journal(args);
      assert.is(result.exitCode, 2, args.join(' '));
      assert.match(result.stderr, /^journal: usage: /, args.join(' '));
      assert.not.match(result.stderr, /\n\s+at /);
    }
    // A value option given twice is refused naming it, never the last one taken silently; nothing is created.
    for (const [args, flag] of [
      [['cat', fresh(), '--since', '1', '--since', '2'], '--since'],
      [['init', fresh(), '--run-id', 'a', '--wait', '1s', '--wait', '2s'], '--wait'],
    ] as const) {
      const result = await journal([...args]);
      assert.is(result.exitCode, 2, args.join(' '));
      assert.is(result.stderr.split('\n')[0], `journal: usage: ${flag} given 2 times; give it once`, args.join(' '));
      assert.not.ok(existsSync(args[1]), args.join(' '));
    }
  }),
);

test(
  'init, append (--data and stdin lines), cat with --type and --since',
  withTimeout(180_000, async () => {
    const file = fresh();
    assert.is((await journal(['init', file, '--run-id', '0042'])).exitCode, 0);
    const again = await journal(['init', file, '--run-id', 'x']);
    assert.is(again.exitCode, 3);
    assert.match(again.stderr, /^journal: exists: /);
    const one = await journal(['append', file, '--type', 'task-done', '--data', '{"task":"a"}']);
    assert.equal([one.exitCode, one.stdout], [0, '1\n']);
    const many = await journal(['append', file, '--type', 'note'], '{"n":1}\n\n{"n":2}\n{"n":3}\n');
    assert.equal([many.exitCode, many.stdout], [0, '2\n3\n4\n']);
    const all = parseJsonLines((await journal(['cat', file])).stdout) as { seq: number; type: string; data: Record<string, unknown> }[];
    assert.equal(
      all.map((r) => r.seq),
      [0, 1, 2, 3, 4],
    );
    assert.equal(all[0]!.data['runId'], '0042', 'string options are taken as typed');
    const notes = parseJsonLines((await journal(['cat', file, '--type', 'note', '--since', '3'])).stdout) as { seq: number }[];
    assert.equal(
      notes.map((r) => r.seq),
      [3, 4],
    );
    // The stored line is `<crc> <json>`; cat prints exactly the JSON.
    assert.is(readFileSync(file, 'utf8').split('\n')[1]!.slice(9), JSON.stringify(all[1]));
  }),
);

test(
  'append creates a missing journal unless --no-create; a bad stdin line stops with exit 2 after the good ones',
  withTimeout(180_000, async () => {
    const missing = fresh();
    const refused = await journal(['append', missing, '--type', 'x', '--data', '{}', '--no-create']);
    assert.equal([refused.exitCode, existsSync(missing)], [2, false]);
    assert.match(refused.stderr, /^journal: missing: /);
    const created = await journal(['append', missing, '--type', 'x', '--data', '{}', '--run-id', 'r-7']);
    assert.equal([created.exitCode, created.stdout], [0, '1\n']);
    assert.is((await readJournal(missing)).records[0]!.data['runId'], 'r-7');
    const bad = await journal(['append', missing, '--type', 'x'], '{"ok":1}\nnot json\n{"ok":2}\n');
    assert.equal([bad.exitCode, bad.stdout], [2, '2\n']);
    assert.match(bad.stderr, /^journal: bad_record: stdin line 2 is not JSON/);
    const huge = await journal(['append', missing, '--type', 'x'], `${JSON.stringify({ blob: 'b'.repeat(1 << 20) })}\n`);
    assert.is(huge.exitCode, 2);
    assert.match(huge.stderr, /^journal: record_too_large: stdin line 1: a x record of \d+ bytes is over the 1048576-byte limit/);
    assert.match(huge.stderr, /hint: store big evidence in a file and journal its path/);
    assert.equal((await validateJournal(missing)).lastSeq, 2, 'nothing of it was written');
    const badPath = await journal(['append', join(dir.path, 'no-such-dir', 'j.jsonl'), '--type', 'x', '--data', '{}']);
    assert.is(badPath.exitCode, 2);
    assert.match(badPath.stderr, /^journal: bad_path: /);
  }),
);

test(
  'append input that can never be appended is refused before the journal is created (exit 2, no file)',
  withTimeout(180_000, async () => {
    const cases: Array<[string[], string | undefined, RegExp]> = [
      [['--type', 'bad type', '--data', '{}'], undefined, /^journal: bad_record: the record type "bad type"/],
      [['--type', 'journal-header', '--data', '{}'], undefined, /^journal: bad_record: "journal-header" is reserved/],
      [['--type', 'bad type'], '{"a":1}\n', /^journal: bad_record: the record type "bad type"/],
      [['--type', 'x'], 'not json\n{"a":1}\n', /^journal: bad_record: stdin line 1 is not JSON/],
      [['--type', 'x'], `${JSON.stringify({ blob: 'b'.repeat(1 << 20) })}\n`, /^journal: record_too_large: stdin line 1: /],
      [['--type', 'x', '--terminal'], '', /^journal: usage: --terminal needs a record/],
      // One --data is one record: a second is never silently dropped (last-wins would lose one).
      [['--type', 'x', '--data', '{"a":1}', '--data', '{"b":2}'], undefined, /^journal: usage: --data given 2 times: give it once/],
      [['--type', 'x', '--type', 'y', '--data', '{}'], undefined, /^journal: usage: --type given 2 times/],
    ];
    for (const [args, input, expected] of cases) {
      const file = fresh('refused');
      const result = await journal(['append', file, ...args], input);
      const shown = `${args.join(' ').slice(0, 60)}: ${result.stderr}`;
      assert.is(result.exitCode, 2, shown);
      assert.match(result.stderr, expected, shown);
      assert.is(result.stdout, '', shown);
      assert.not.ok(existsSync(file), `nothing created: ${shown}`);
      assert.not.ok(existsSync(`${file}.lock.json`), shown);
    }
    const empty = fresh('empty');
    assert.equal([(await journal(['append', empty, '--type', 'x'], '')).exitCode, existsSync(empty)], [0, false], 'no records, no journal');
  }),
);

test(
  'validate: 0 clean, 1 torn tail, 3 corrupt naming byte offset and seq; --json says the same',
  withTimeout(180_000, async () => {
    const sample = await writeSample(dir.path, `v-${++n}.jsonl`);
    const clean = await journal(['validate', sample.path]);
    assert.equal([clean.exitCode, clean.stdout], [0, `${sample.path}: clean: 5 records, last seq 4\n`]);
    const last = sample.offsets.at(-1)!;
    writeFileSync(sample.path, sample.bytes.subarray(0, last + 30));
    const torn = await journal(['validate', sample.path]);
    assert.is(torn.exitCode, 1);
    assert.match(torn.stderr, `journal: torn_tail: ${sample.path} has a torn tail at byte ${last}`);
    assert.match(torn.stderr, `hint: journal repair ${sample.path}`);
    const bytes = Buffer.from(sample.bytes);
    bytes[sample.offsets[3]! + 40] = bytes[sample.offsets[3]! + 40]! ^ 0x01;
    writeFileSync(sample.path, bytes);
    const bad = await journal(['validate', sample.path, '--json']);
    assert.is(bad.exitCode, 3);
    assert.match(bad.stderr, `journal: corrupt: ${sample.path} is corrupt at byte ${sample.offsets[3]} (seq 3): crc_mismatch`);
    const verdict = JSON.parse(bad.stdout) as Record<string, unknown>;
    assert.equal(
      [verdict['status'], verdict['offset'], verdict['seq'], verdict['reason'], verdict['lastSeq']],
      ['corrupt', sample.offsets[3], 3, 'crc_mismatch', 2],
    );
    const nothing = await journal(['validate', join(dir.path, 'absent.jsonl')]);
    assert.is(nothing.exitCode, 2);
  }),
);

test(
  'repair cuts a torn tail (keeps FILE.broken, journals it); refuses corruption and changes nothing',
  withTimeout(180_000, async () => {
    const sample = await writeSample(dir.path, `r-${++n}.jsonl`);
    const torn = Buffer.concat([sample.bytes, Buffer.from('1234abcd {"seq":5,"prev":"')]);
    writeFileSync(sample.path, torn);
    const repaired = await journal(['repair', sample.path]);
    assert.is(repaired.exitCode, 0, repaired.stderr);
    assert.match(repaired.stdout, `cut 26 torn bytes at byte ${sample.bytes.length}`);
    assert.equal(readFileSync(`${sample.path}.broken`), torn);
    assert.is((await journal(['validate', sample.path])).exitCode, 0);
    const { records } = await readJournal(sample.path);
    assert.is(records.at(-1)!.type, 'journal-repaired');
    assert.is((await journal(['repair', sample.path])).stdout, `${sample.path}: clean, nothing to repair\n`);

    const corrupt = Buffer.from(readFileSync(sample.path));
    corrupt[sample.offsets.at(-1)! + 30] = corrupt[sample.offsets.at(-1)! + 30]! ^ 0x02;
    writeFileSync(sample.path, corrupt);
    const refused = await journal(['repair', sample.path]);
    assert.is(refused.exitCode, 3);
    assert.match(refused.stderr, /^journal: corrupt: .* \(seq 4\): crc_mismatch/);
    assert.equal(readFileSync(sample.path), corrupt, 'nothing changed');
    const append = await journal(['append', sample.path, '--type', 'x', '--data', '{}']);
    assert.is(append.exitCode, 3, 'append refuses a corrupt journal');
    assert.equal(readFileSync(sample.path), corrupt);
  }),
);

test(
  'an empty (0-byte) journal: cat, validate and repair give the one answer, missing (exit 2), and change nothing; a repaired torn header leaves the same',
  withTimeout(60_000, async () => {
    const empty = fresh('empty');
    writeFileSync(empty, '');
    const said = `journal: missing: ${empty} is empty: it has no header, so there is nothing to repair\n`;
    for (const args of [
      // cat used to print nothing at all and exit 0, as if the journal were whole and had no records.
      ['cat', empty],
      ['cat', empty, '--type', 'checkpoint'],
      ['validate', empty],
      ['validate', empty, '--json'],
      ['repair', empty],
      ['repair', empty, '--json'],
    ]) {
      const r = await journal(args);
      assert.is(r.exitCode, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.is(r.stdout, '', `${args.join(' ')}: no verdict on stdout`);
      assert.ok(r.stderr.startsWith(said), `${args.join(' ')}: ${r.stderr}`);
    }
    assert.equal(readFileSync(empty), Buffer.alloc(0), 'nothing changed');
    assert.not.ok(existsSync(`${empty}.broken`));
    // A torn header line is repairable; what repair leaves is that empty file.
    const torn = fresh('torn-header');
    writeFileSync(torn, '1234abcd {"seq":0,"prev":"00000000","ts"');
    assert.is((await journal(['validate', torn])).exitCode, 1);
    const tornCat = await journal(['cat', torn]);
    assert.equal([tornCat.exitCode, tornCat.stdout], [0, '']);
    assert.ok(tornCat.stderr.startsWith(`journal: torn_tail: ${torn} has a torn tail at byte 0`), tornCat.stderr);
    assert.match(tornCat.stderr, `printed the 0 records before it\n  hint: journal repair ${torn}\n`);
    assert.is((await journal(['repair', torn])).exitCode, 0);
    assert.is((await journal(['validate', torn])).exitCode, 2);
  }),
);

test(
  'a FIFO or a device in place of the journal is bad_path (exit 2) for every command, never waited on or read as empty',
  withTimeout(60_000, async () => {
    const fifo = fresh('fifo');
    execFileSync('mkfifo', [fifo]);
    for (const [path, args] of [
      // Every command used to block forever in open(2), waiting for a writer.
      [fifo, ['cat', fifo]],
      [fifo, ['validate', fifo, '--json']],
      [fifo, ['repair', fifo]],
      [fifo, ['append', fifo, '--type', 'x', '--data', '{}']],
      // A device was read as a 0-byte journal: `missing: /dev/zero is empty`.
      ['/dev/zero', ['validate', '/dev/zero']],
      ['/dev/urandom', ['cat', '/dev/urandom']],
    ] as const) {
      const r = await journal([...args], '');
      assert.is(r.exitCode, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.is(r.stdout, '', args.join(' '));
      assert.is(r.stderr, `journal: bad_path: ${JSON.stringify(path)} is not a regular file (a FIFO, socket or device)\n`, args.join(' '));
    }
    // The library's readers refuse it too, without blocking.
    const thrown = await validateJournal(fifo).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.match(String(thrown), 'is not a regular file');
  }),
);

test(
  'a lock identity that cannot be written: io_error (exit 3) whose hint names the journal to validate, not the identity file',
  withTimeout(60_000, async () => {
    const path = fresh('identity');
    assert.is((await journal(['append', path, '--type', 'x', '--data', '{}', '--run-id', 'r-1'])).exitCode, 0);
    // A directory where the identity file goes: its rename fails (as a read-only directory's write would).
    mkdirSync(`${path}.lock.json`);
    for (const args of [
      ['append', path, '--type', 'x', '--data', '{}'],
      ['repair', path],
    ]) {
      const r = await journal(args);
      assert.is(r.exitCode, 3, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, `journal: io_error: writing the lock identity ${path}.lock.json failed: EISDIR`);
      // It said `journal validate FILE.lock.json`, which is no journal.
      assert.match(
        r.stderr,
        `\n  hint: every record acknowledged before the error is durable; journal validate ${path} shows the last one\n`,
      );
    }
  }),
);

test(
  'cat of a journal with a forged-checksum record whose shape is wrong (data null, type "") prints nothing and exits 3 naming it, never a silent prefix',
  withTimeout(60_000, async () => {
    for (const [field, value, detail] of [
      ['data', null, 'data is not an object'],
      ['type', '', 'type is not a non-empty string'],
    ] as const) {
      const sample = await writeSample(dir.path, `shape-${++n}.jsonl`, 6);
      // Re-chain from record 2 on, record 2 malformed: every checksum and prev holds.
      let prev = crcOf(sample.lines[1]!);
      const lines = sample.lines.map((line, i) => {
        if (i < 2) return line;
        const record = { ...recordOf(line), prev } as JournalRecord;
        if (i === 2) (record as unknown as Record<string, unknown>)[field] = value;
        const json = JSON.stringify(record);
        prev = crcHex(json);
        return Buffer.from(`${prev} ${json}\n`);
      });
      writeFileSync(sample.path, Buffer.concat(lines));
      const r = await journal(['cat', sample.path]);
      // It printed the 2 records before it and exited 0, with nothing on stderr.
      assert.is(r.exitCode, 3, r.stderr);
      assert.is(r.stdout, '');
      assert.match(r.stderr, `journal: corrupt: ${sample.path} is corrupt at byte ${sample.offsets[2]} (seq 2): bad_record: ${detail}\n`);
    }
  }),
);

test(
  'CRLF and BOM from an editor get a clear error; append refuses after a terminal record',
  withTimeout(180_000, async () => {
    const sample = await writeSample(dir.path, `e-${++n}.jsonl`);
    writeFileSync(sample.path, sample.bytes.toString('utf8').replaceAll('\n', '\r\n'));
    const crlf = await journal(['validate', sample.path]);
    assert.is(crlf.exitCode, 3);
    assert.match(crlf.stderr, /crlf: the line ends with CR: the file was saved with CRLF line endings \(by an editor\?\)/);
    writeFileSync(sample.path, Buffer.concat([Buffer.from('\ufeff'), sample.bytes]));
    const bom = await journal(['validate', sample.path]);
    assert.is(bom.exitCode, 3);
    assert.match(bom.stderr, /at byte 0 .*bom: the file starts with a UTF-8 byte order mark/);

    const file = fresh();
    assert.is((await journal(['append', file, '--type', 'run-complete', '--terminal', '--data', '{"ok":true}'])).exitCode, 0);
    const late = await journal(['append', file, '--type', 'late', '--data', '{}']);
    assert.is(late.exitCode, 3);
    assert.match(late.stderr, /^journal: terminal: /);
    const second = await journal(['append', file, '--type', 'run-failed', '--terminal', '--data', '{}']);
    assert.is(second.exitCode, 3);
    const { records } = await readJournal(file);
    assert.equal(
      records.map((r) => [r.type, r.terminal ?? false]),
      [
        ['journal-header', false],
        ['run-complete', true],
      ],
    );
    const viaStdin = fresh();
    const t = await journal(['append', viaStdin, '--type', 'e', '--terminal'], '{"i":1}\n{"i":2}\n');
    assert.equal([t.exitCode, t.stdout], [0, '1\n2\n']);
    assert.equal(
      (await readJournal(viaStdin)).records.map((r) => r.terminal ?? false),
      [false, false, true],
    );
  }),
);

test(
  '20 concurrent journal append processes produce 20 contiguous records',
  withTimeout(120_000, async () => {
    const file = fresh('concurrent');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        runBin(bin, ['append', file, '--type', 'worker-done', '--data', JSON.stringify({ worker: i }), '--wait', '100s'], {
          timeoutMs: 110_000,
        }),
      ),
    );
    for (const r of results) assert.is(r.exitCode, 0, r.stderr);
    const seqs = results.map((r) => Number(r.stdout.trim())).sort((a, b) => a - b);
    assert.equal(
      seqs,
      Array.from({ length: 20 }, (_, i) => i + 1),
      'every process got its own seq',
    );
    const { records, status } = await readJournal(file);
    assert.equal(status, { kind: 'clean' });
    assert.equal(
      records.map((r) => r.seq),
      Array.from({ length: 21 }, (_, i) => i),
    );
    assert.equal(
      records
        .slice(1)
        .map((r) => r.data['worker'])
        .sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 20 }, (_, i) => i),
    );
  }),
);

test(
  'a second writer is refused while the first lives (naming pid and start time), and takes over at once after kill -9',
  withTimeout(60_000, async () => {
    const file = fresh('lock');
    const holder = await spawnHolder(file);
    const startTime = processIdentity(holder.pid)!.startTime;
    const refused = await journal(['append', file, '--type', 'x', '--data', '{}', '--wait', '300ms']);
    assert.is(refused.exitCode, 4);
    assert.match(refused.stderr, `journal: lock_held: ${file} is held by pid ${holder.pid} (start time ${startTime})`);
    const who = await journal(['holder', file]);
    assert.is(who.exitCode, 0);
    assert.equal([JSON.parse(who.stdout).pid, JSON.parse(who.stdout).startTime], [holder.pid, startTime]);
    holder.child.kill('SIGKILL');
    await holder.exited;
    const taken = await journal(['append', file, '--type', 'x', '--data', '{}', '--wait', '0s']);
    assert.is(taken.exitCode, 0, taken.stderr);
    assert.is(taken.stdout, '2\n');
    assert.equal((await validateJournal(file)).status, { kind: 'clean' });
  }),
);

test(
  'a holder stopped with SIGSTOP still holds: not taken over; holder names it',
  withTimeout(60_000, async () => {
    const file = fresh('stopped');
    const holder = await spawnHolder(file);
    try {
      holder.child.kill('SIGSTOP');
      const refused = await journal(['append', file, '--type', 'x', '--data', '{}', '--wait', '1s']);
      assert.is(refused.exitCode, 4);
      assert.match(refused.stderr, `held by pid ${holder.pid}`);
      const repair = await journal(['repair', file, '--wait', '200ms']);
      assert.is(repair.exitCode, 4, 'repair waits for the writer lock too');
      const who = await journal(['holder', file]);
      assert.equal([who.exitCode, JSON.parse(who.stdout).pid], [0, holder.pid]);
    } finally {
      holder.child.kill('SIGCONT');
    }
    holder.child.stdin!.end();
    await holder.exited;
    assert.is(holder.child.exitCode, 0);
    assert.is((await journal(['append', file, '--type', 'x', '--data', '{}', '--wait', '0s'])).exitCode, 0);
  }),
);

test(
  'holder never takes the lock: nobody → exit 1, nothing bound, no identity written',
  withTimeout(180_000, async () => {
    const file = fresh('holder');
    assert.is((await journal(['init', file, '--run-id', 'h'])).exitCode, 0);
    for (let i = 0; i < 3; i++) {
      const who = await journal(['holder', file]);
      assert.equal([who.exitCode, who.stdout], [1, '']);
      assert.match(who.stderr, /^journal: not_held: nobody holds the writer lock/);
    }
    assert.not.ok(existsSync(`${file}.lock.json`));
    assert.not.ok(await isLockHeld(file));
    assert.is((await journal(['append', file, '--type', 'x', '--data', '{}', '--wait', '0s'])).exitCode, 0);
  }),
);

test(
  'a lock taken on another host is refused (exit 4) unless --break-lock',
  withTimeout(180_000, async () => {
    const file = fresh('foreign');
    assert.is((await journal(['init', file, '--run-id', 'f'])).exitCode, 0);
    const other = { pid: 4312, startTime: 77, bootId: bootId(), host: `not-${hostname()}`, acquiredAt: '2026-11-29T07:41:00.000Z' };
    writeFileSync(`${file}.lock.json`, JSON.stringify(other));
    const refused = await journal(['append', file, '--type', 'x', '--data', '{}', '--wait', '0s']);
    assert.is(refused.exitCode, 4);
    assert.match(refused.stderr, /^journal: foreign_host: .* pid 4312 \(start time 77\) on not-/);
    assert.match(refused.stderr, /hint: .*--break-lock/);
    const broken = await journal(['append', file, '--type', 'x', '--data', '{}', '--break-lock']);
    assert.is(broken.exitCode, 0, broken.stderr);
  }),
);

test(
  'a stale identity from another boot is taken over at once; a live process of this boot whose socket does not answer is refused (exit 4)',
  withTimeout(180_000, async () => {
    const file = fresh('stale');
    assert.is((await journal(['init', file, '--run-id', 's'])).exitCode, 0);
    const rebooted = {
      pid: process.pid,
      startTime: 1,
      bootId: `not-${bootId()}`,
      host: hostname(),
      acquiredAt: '2026-11-29T07:41:00.000Z',
    };
    writeFileSync(`${file}.lock.json`, JSON.stringify(rebooted));
    const taken = await journal(['append', file, '--type', 'x', '--data', '{}', '--wait', '0s']);
    assert.is(taken.exitCode, 0, taken.stderr);
    // This test process is alive and holds no socket for the file: it cannot be verified.
    const me = processIdentity(process.pid)!;
    writeFileSync(`${file}.lock.json`, JSON.stringify({ ...me, acquiredAt: '2026-11-29T07:41:00.000Z' }));
    const refused = await journal(['append', file, '--type', 'x', '--data', '{}', '--wait', '0s']);
    assert.is(refused.exitCode, 4, refused.stderr);
    assert.match(refused.stderr, `journal: lock_held: ${file} is held by pid ${process.pid} (start time ${me.startTime})`);
    assert.match(refused.stderr, 'its lock socket does not answer');
    const broken = await journal(['append', file, '--type', 'x', '--data', '{}', '--break-lock']);
    assert.is(broken.exitCode, 0, broken.stderr);
    assert.is((await validateJournal(file)).lastSeq, 2);
  }),
);

test(
  'EFBIG (ulimit -f) poisons the writer; the file validates up to the last acknowledged record',
  withTimeout(60_000, async () => {
    const file = fresh('efbig');
    assert.is((await journal(['init', file, '--run-id', 'big'])).exitCode, 0);
    const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ i, pad: 'x'.repeat(40) })).join('\n');
    // 8 blocks of 512 bytes: the journal cannot grow past 4096 bytes.
    const limited = await runBin(shFixture('journal-ulimit-fsize.sh'), ['8', process.execPath, bin, 'append', file, '--type', 'fill'], {
      input: `${lines}\n`,
    });
    assert.is(limited.exitCode, 3, limited.stderr);
    assert.match(limited.stderr, /^journal: io_error: appending to .* failed: EFBIG/);
    const acked = limited.stdout.trim().split('\n').filter(Boolean).map(Number);
    assert.ok(acked.length > 0 && acked.length < 200);
    assert.equal(
      acked,
      Array.from({ length: acked.length }, (_, i) => i + 1),
      'acknowledged in order',
    );
    const verdict = await validateJournal(file);
    assert.ok(verdict.status.kind !== 'corrupt', JSON.stringify(verdict.status));
    assert.ok(verdict.lastSeq >= acked.at(-1)!, 'every acknowledged record is in the valid prefix');
    // Without the limit the next writer repairs the tail and carries on.
    const after = await journal(['append', file, '--type', 'after', '--data', '{}']);
    assert.is(after.exitCode, 0, after.stderr);
    assert.equal((await validateJournal(file)).status, { kind: 'clean' });
  }),
);

test(
  'cat of a corrupt journal prints nothing (exit 3); cat into a closed pipe does not crash',
  withTimeout(180_000, async () => {
    const sample = await writeSample(dir.path, `c-${++n}.jsonl`, 3000);
    const head = spawn(process.execPath, [bin, 'cat', sample.path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    head.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    head.stdout.once('data', () => head.stdout.destroy());
    const [code] = (await once(head, 'exit')) as [number | null];
    assert.equal([code, stderr], [0, '']);
    const bytes = Buffer.from(sample.bytes);
    bytes[sample.offsets[2000]! + 30] = bytes[sample.offsets[2000]! + 30]! ^ 0x04;
    writeFileSync(sample.path, bytes);
    const cat = await journal(['cat', sample.path]);
    assert.equal([cat.exitCode, cat.stdout], [3, '']);
    assert.match(cat.stderr, /\(seq 2000\)/);
  }),
);

test(
  'the terminal hangs up while append waits on its producer (tmux pane killed, HUP ignored by the caller): the record is appended, exit 0, never Node’s abort (134)',
  withTimeout(60_000, async () => {
    const file = join(dir.path, `hup-${++n}.jsonl`);
    assert.is((await journal(['init', file, '--run-id', 'r1'])).exitCode, 0);
    const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
    // The producer writes its record only after the test has hung the terminal up.
    const producer = 'touch "$T/started"; while [ ! -e "$T/hung" ]; do sleep 0.05; done; echo \'{"n":1}\'';
    const term = await inHangingTerminal(
      `sh -c ${quoted(producer)} | ${quoted(process.execPath)} ${quoted(bin)} append ${quoted(file)} --type note 2>"$T/err"`,
      process.env,
    );
    try {
      await waitUntil('the producer started', () => existsSync(join(term.dir, 'started')));
      await term.hangUp();
      writeFileSync(join(term.dir, 'hung'), '');
      const err = () => readFileSync(join(term.dir, 'err'), 'utf8');
      assert.is(await term.exitStatus(), 0, err());
      assert.not.match(err(), /Assertion failed|Native stack trace/);
      const cat = await journal(['cat', file, '--type', 'note']);
      assert.equal(
        parseJsonLines(cat.stdout).map((r) => (r as { data: unknown }).data),
        [{ n: 1 }],
      );
    } finally {
      await term.cleanup();
    }
  }),
);

test.run();
