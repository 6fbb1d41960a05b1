// disk.ts: which errors are the disk's, sizes, free space; and an evidence stream on a full
// file system ends instead of hanging.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import {
  describeFault,
  diskFailure,
  diskFaultInText,
  diskFaultOf,
  formatBytes,
  freeSpace,
  parseSize,
  roomRefusal,
} from '../src/host/disk.js';
import { readJournalFailureNote, writeJournalFailureNote } from '../src/host/disk-reserve.js';
import { evidenceSink } from '../src/host/evidence.js';
import { agentConsumer, initialAgentState } from '../src/agent/consumer.js';
import { loadPlan } from '../src/plan/load.js';
import { smallFs } from './small-fs.js';

test('ENOSPC, EDQUOT and EFBIG are disk_full, EIO is io_error; other errors are not the disk', () => {
  const err = (code: string, path?: string) => Object.assign(new Error(code), { code, ...(path ? { path } : {}) });
  assert.equal(diskFaultOf(err('ENOSPC', '/s/x')), { errno: 'ENOSPC', path: '/s/x' });
  assert.equal(diskFaultOf(err('EDQUOT'), '/given'), { errno: 'EDQUOT', path: '/given' });
  assert.is(diskFailure(diskFaultOf(err('EFBIG', '/f'))!, 'command').reason, 'disk_full');
  const io = diskFailure(diskFaultOf(err('EIO', '/d'))!, 'setup');
  assert.equal([io.class, io.reason, io.detail], ['environment', 'io_error', { errno: 'EIO', path: '/d' }]);
  // A journal failure carries its fs error as data.
  assert.equal(diskFaultOf({ error: { reason: 'io_error', code: 'ENOSPC', path: '/j' } }), { errno: 'ENOSPC', path: '/j' });
  for (const other of [err('EACCES'), err('ENOENT'), new Error('ENOSPC in a message is not a code'), 'ENOSPC', null])
    assert.is(diskFaultOf(other), undefined);
});

test("what git and workdir say: errno names and strerror text, and git checkout's errno-less write failure", () => {
  assert.equal(diskFaultInText('fatal: unable to write loose object file: No space left on device', '/repo'), {
    errno: 'ENOSPC',
    path: '/repo',
  });
  assert.equal(diskFaultInText('cannot mark /w/x: ENOSPC', '/w/x'), { errno: 'ENOSPC', path: '/w/x' });
  assert.equal(diskFaultInText('error: Disk quota exceeded', '/q')?.errno, 'EDQUOT');
  assert.equal(diskFaultInText('fatal: read error: Input/output error', '/r')?.errno, 'EIO');
  assert.equal(diskFaultInText('error: unable to write file big.bin\nfatal: Could not reset index file', '/t'), {
    errno: null,
    path: '/t',
  });
  assert.is(diskFaultInText('fatal: invalid reference: main', '/t'), undefined);
  assert.is(describeFault({ errno: 'ENOSPC', path: '/s/t.jsonl' }), 'no space left on device (ENOSPC) writing /s/t.jsonl');
});

test('sizes: bytes, binary and decimal units; anything else is not a size', () => {
  assert.is(parseSize(4096), 4096);
  assert.is(parseSize('4096'), 4096);
  assert.is(parseSize('1GiB'), 1024 ** 3);
  assert.is(parseSize('500MiB'), 500 * 1024 ** 2);
  assert.is(parseSize('64 KiB'), 64 * 1024);
  assert.is(parseSize('2GB'), 2e9);
  assert.is(parseSize('1.5M'), 1.5 * 1024 ** 2);
  assert.is(parseSize('0'), 0);
  for (const bad of ['', 'lots', '1 GiBs', '-1', '1e3', -5, 1.5]) assert.is(parseSize(bad), undefined, String(bad));
  assert.is(formatBytes(0), '0 B');
  assert.is(formatBytes(1536), '1.5 KiB');
  assert.is(formatBytes(1024 ** 3), '1.0 GiB');
});

test(
  'min_free: a size key of the plan (default none set: 1 GiB applies); a bad one is a problem at its key',
  withTimeout(10_000, async () => {
    const dir = tempDir('runplan-minfree-');
    try {
      const task = '[[tasks]]\nid = "a"\ncommand = ["true"]\n';
      writeFileSync(join(dir.path, 'ok.toml'), `slug = "s"\nmin_free = "500MiB"\n${task}`);
      writeFileSync(join(dir.path, 'bytes.toml'), `slug = "s"\nmin_free = 0\n${task}`);
      writeFileSync(join(dir.path, 'none.toml'), `slug = "s"\n${task}`);
      writeFileSync(join(dir.path, 'bad.toml'), `slug = "s"\nmin_free = "plenty"\n${task}`);
      const ok = await loadPlan(join(dir.path, 'ok.toml'));
      assert.ok(ok.ok && ok.value.minFree === 500 * 1024 ** 2);
      const bytes = await loadPlan(join(dir.path, 'bytes.toml'));
      assert.ok(bytes.ok && bytes.value.minFree === 0);
      const none = await loadPlan(join(dir.path, 'none.toml'));
      assert.ok(none.ok && none.value.minFree === undefined);
      const bad = await loadPlan(join(dir.path, 'bad.toml'));
      assert.ok(!bad.ok);
      if (!bad.ok)
        assert.equal(
          bad.error.map((p) => [p.path, p.reason]),
          [['min_free', 'bad_size']],
        );
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'free space comes from statfs of the nearest existing ancestor; roomRefusal refuses only below min_free',
  withTimeout(10_000, async () => {
    const fs = smallFs(1024 * 1024);
    try {
      const gone = join(fs.path, 'run', 'evidence', 'a.1', 'transcript.jsonl');
      const free = await freeSpace(gone);
      assert.is(free?.path, fs.path);
      assert.is(free?.freeBytes, 1024 * 1024);
      assert.is(await roomRefusal(gone, 512 * 1024, 'why', 'plan.toml'), undefined);
      fs.fill(64 * 1024);
      const refusal = await roomRefusal(gone, 512 * 1024, 'run r failed for lack of space', 'plan.toml');
      assert.is(refusal?.reason, 'disk_full');
      assert.match(
        refusal?.message ?? '',
        `run r failed for lack of space; the file system of ${gone} has 64.0 KiB free, below min_free 512.0 KiB`,
      );
    } finally {
      fs.cleanup();
    }
  }),
);

test(
  "a journal-failure note is believed only when it names the run's last coordinator",
  withTimeout(10_000, async () => {
    const dir = tempDir('runplan-note-');
    try {
      const me = { pid: 42, startTime: 7, bootId: 'b', host: 'h' };
      assert.is(await readJournalFailureNote(dir.path, me), undefined);
      assert.ok(
        await writeJournalFailureNote(dir.path, {
          coordinator: me,
          failedAt: 'now',
          reason: 'disk_full',
          errno: 'ENOSPC',
          path: '/j',
          message: 'm',
        }),
      );
      assert.is((await readJournalFailureNote(dir.path, me))?.errno, 'ENOSPC');
      assert.is(await readJournalFailureNote(dir.path, { ...me, startTime: 8 }), undefined);
      assert.is(await readJournalFailureNote(dir.path, null), undefined);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a transcript on a full file system: the consumer ends with the error (it used to wait for drain forever), close() resolves',
  withTimeout(20_000, async () => {
    const fs = smallFs(256 * 1024);
    try {
      mkdirSync(join(fs.path, 'e'));
      let told: NodeJS.ErrnoException | undefined;
      const sink = evidenceSink(join(fs.path, 'e', 'transcript.jsonl'), [], (e) => (told = e));
      const line = Buffer.from(`${'x'.repeat(1023)}\n`);
      const stdout = Readable.from(
        (function* () {
          for (let i = 0; i < 4096; i++) yield line;
        })(),
      );
      const state = initialAgentState('text');
      const failure = await agentConsumer('text', { transcript: sink.stream })(stdout, state);
      await sink.close();
      assert.instance(failure, Error);
      assert.match(String(failure), /transcript write failed/);
      assert.is(sink.error?.code, 'ENOSPC');
      assert.is(told?.code, 'ENOSPC');
      assert.is(state.lines, 4096, 'stdout was read to its end');
    } finally {
      fs.cleanup();
    }
  }),
);

test.run();
