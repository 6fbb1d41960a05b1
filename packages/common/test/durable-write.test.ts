// writeFileDurable: a whole file or the old one, never part of one — also when the writer is
// killed mid-write (a real process, SIGKILL) — and no temporary file left by a failed write.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import { writeFileDurable } from '../src/index.js';

const dir = tempDir('runplan-durable-');
test.after(() => dir.cleanup());
const moduleUrl = new URL('../src/durable-write.js', import.meta.url).href;

test(
  'writes the whole file with its mode, replaces an old one, replaces a symlink at the path instead of writing through it',
  withTimeout(10_000, async () => {
    const path = join(dir.path, 'plain');
    await writeFileDurable(path, 'first\n');
    assert.is(readFileSync(path, 'utf8'), 'first\n');
    assert.is(statSync(path).mode & 0o777, 0o600);
    // The mode exactly, whatever the umask narrows open()'s to.
    const umask = process.umask(0o077);
    try {
      await writeFileDurable(path, Buffer.from('second\n'), { mode: 0o640, fsync: false });
    } finally {
      process.umask(umask);
    }
    assert.is(readFileSync(path, 'utf8'), 'second\n');
    assert.is(statSync(path).mode & 0o777, 0o640);
    const target = join(dir.path, 'target');
    writeFileSync(target, 'keep me\n');
    const link = join(dir.path, 'link');
    symlinkSync(target, link);
    await writeFileDurable(link, 'new\n');
    assert.is(readFileSync(target, 'utf8'), 'keep me\n', 'the link target is untouched');
    assert.is(readFileSync(link, 'utf8'), 'new\n');
    assert.equal(
      readdirSync(dir.path).filter((n) => n.endsWith('.tmp')),
      [],
    );
  }),
);

test(
  'a write that fails (its path is a directory; its directory is gone) rejects and leaves no temporary file',
  withTimeout(10_000, async () => {
    const sub = join(dir.path, 'fails');
    mkdirSync(join(sub, 'a-dir'), { recursive: true });
    const renameFailed = await writeFileDurable(join(sub, 'a-dir'), 'x').then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e.code,
    );
    assert.ok(renameFailed === 'EISDIR' || renameFailed === 'ENOTEMPTY' || renameFailed === 'EEXIST', String(renameFailed));
    assert.equal(readdirSync(sub), ['a-dir']);
    const noDir = await writeFileDurable(join(sub, 'missing', 'f'), 'x').then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e.code,
    );
    assert.is(noDir, 'ENOENT');
  }),
);

test(
  'a write the file system refuses (ENOSPC on a full tmpfs) rejects, keeps the old file, leaves no temporary file',
  withTimeout(10_000, async () => {
    const fs = join(dir.path, 'small');
    mkdirSync(fs);
    // A real 64 KiB file system (the tests run as root); a test that cannot mount fails.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', fs]);
    try {
      const path = join(fs, 'data');
      await writeFileDurable(path, 'old\n');
      const full = await writeFileDurable(path, Buffer.alloc(1 << 20, 65)).then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e.code,
      );
      assert.is(full, 'ENOSPC');
      assert.is(readFileSync(path, 'utf8'), 'old\n');
      assert.equal(readdirSync(fs), ['data']);
    } finally {
      execFileSync('umount', ['-l', fs]);
    }
  }),
);

// A writer that rewrites one file with 4 MiB of 'A' or 'B' in turn, printing each write done.
const writer = `
import { writeFileDurable } from ${JSON.stringify(moduleUrl)};
const [path] = process.argv.slice(2);
const a = Buffer.alloc(4 << 20, 65), b = Buffer.alloc(4 << 20, 66);
for (let i = 0; ; i++) { await writeFileDurable(path, i % 2 ? b : a); process.stdout.write('wrote ' + i + '\\n'); }
`;

test(
  'a writer killed (SIGKILL) in the middle of its writes leaves the old file or the new one whole, never a mix or a cut',
  withTimeout(60_000, async () => {
    const script = join(dir.path, 'writer.mjs');
    writeFileSync(script, writer);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const whole = new Set([sha(Buffer.alloc(4 << 20, 65)), sha(Buffer.alloc(4 << 20, 66))]);
    for (let round = 0; round < 6; round++) {
      const sub = join(dir.path, `killed-${round}`);
      mkdirSync(sub);
      const path = join(sub, 'data');
      const child = spawn(process.execPath, [script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
      // Killed once a few writes are done, at a point of its loop that varies with each round.
      await new Promise<void>((resolve, reject) => {
        child.once('exit', (code, signal) => reject(new Error(`round ${round}: the writer ended by itself (${code ?? signal})`)));
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => {
          out += c;
          if (out.includes(`wrote ${2 + round}\n`)) {
            setTimeout(() => child.kill('SIGKILL'), round);
            resolve();
          }
        });
      });
      await new Promise((resolve) => child.once('close', resolve));
      assert.ok(whole.has(sha(readFileSync(path))), `round ${round}: the file is one whole write`);
      const left = readdirSync(sub).filter((n) => n !== 'data');
      assert.ok(left.length <= 1 && left.every((n) => /^\.data\.\d+\.\d+\.tmp$/.test(n)), `round ${round}: ${left.join(', ')}`);
    }
  }),
);

test.run();
