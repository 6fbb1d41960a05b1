import { chmodSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import { capture, exitCodeFor, type SettleEvent } from '../src/index.js';
import { killQuietly, pidsIn, reaped, sh, taggedAlive } from './support.js';

test(
  'a nonzero exit is data: code, stdout and stderr captured, nothing left behind',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'] });
    assert.is(r.reason, 'exited');
    assert.is(r.exitCode, 3);
    assert.is(r.signal, null);
    assert.is(r.stdout.toString(), 'out\n');
    assert.is(r.stderr.toString(), 'err\n');
    assert.is(r.teardown.result, 'none');
    assert.is(r.error, undefined);
    assert.is(exitCodeFor(r), 3);
    assert.ok(reaped(r.pid));
    assert.equal(taggedAlive(r.tag), []);
  }),
);

test(
  'env overrides add, replace and delete; the tag is added under its own name',
  withTimeout(20_000, async () => {
    const r = await capture({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, for sh
      argv: ['sh', '-c', 'echo "$A|${B-unset}|$C"; env | grep -c "^RUNPLAN_OWNER_"'],
      baseEnv: { PATH: process.env.PATH, A: 'base', B: 'gone' },
      env: { A: 'over', B: undefined, C: 'new' },
      ownerTag: 'attempt_1',
    });
    assert.is(r.stdout.toString(), 'over|unset|new\n2\n');
  }),
);

test(
  'an empty prompt ("" or an empty Buffer) gives the child an empty stdin: one that exits without reading is never a transport error',
  withTimeout(60_000, async () => {
    // With a pipe, closing our end after the child already exited can fail with EPIPE (a
    // race, about 1 run in 3 here); there is nothing to deliver, so there is no pipe.
    for (let i = 0; i < 20; i++) {
      for (const input of ['', Buffer.alloc(0)]) {
        const r = await capture({ argv: ['/bin/true'], input });
        assert.is(r.reason, 'exited');
        assert.is(r.error, undefined, `run ${i}: ${r.error?.message}`);
        assert.is(r.bytesIn, 0);
      }
    }
    const reads = await capture({ argv: ['sh', '-c', 'wc -c'], input: '' });
    assert.is(reads.stdout.toString().trim(), '0');
    // No pipe at all (Node's stdin pipes are sockets), so there is no close of ours to race.
    const kind = await capture({ argv: ['sh', '-c', 'if [ -S /dev/stdin ]; then echo socket; else echo none; fi'], input: '' });
    assert.is(kind.stdout.toString(), 'none\n');
    const piped = await capture({ argv: ['sh', '-c', 'if [ -S /dev/stdin ]; then echo socket; else echo none; fi'], input: 'x' });
    assert.is(piped.stdout.toString(), 'socket\n');
  }),
);

test(
  'input as string, Buffer and file reaches stdin; bytesIn counts it',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'prompt.txt');
      writeFileSync(file, 'from a file');
      for (const input of ['a string', Buffer.from([0, 1, 2, 255]), { file }]) {
        const r = await capture({ argv: ['cat'], input });
        const expected = typeof input === 'string' ? Buffer.from(input) : Buffer.isBuffer(input) ? input : Buffer.from('from a file');
        assert.equal(r.stdout, expected);
        assert.is(r.bytesIn, expected.length);
        assert.is(r.bytesOut, expected.length);
      }
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'ENOENT, EACCES and a missing cwd are spawn_failed with 127, 126 and 125',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      const notExecutable = join(dir.path, 'script.sh');
      writeFileSync(notExecutable, '#!/bin/sh\necho hi\n');
      chmodSync(notExecutable, 0o644);
      const missing = await capture({ argv: [join(dir.path, 'no-such-command')] });
      assert.is(missing.reason, 'spawn_failed');
      assert.is(missing.error?.code, 'ENOENT');
      assert.is(missing.pid, undefined);
      assert.is(exitCodeFor(missing), 127);
      const denied = await capture({ argv: [notExecutable] });
      assert.is(denied.reason, 'spawn_failed');
      assert.is(denied.error?.code, 'EACCES');
      assert.is(exitCodeFor(denied), 126);
      const nowhere = await capture({ argv: ['true'], cwd: join(dir.path, 'missing') });
      assert.is(nowhere.reason, 'spawn_failed');
      assert.is(nowhere.error?.where, 'cwd');
      assert.is(exitCodeFor(nowhere), 125);
      const noInput = await capture({ argv: ['cat'], input: { file: join(dir.path, 'missing.txt') } });
      assert.is(noInput.reason, 'spawn_failed');
      assert.is(noInput.error?.where, 'input');
      assert.is(exitCodeFor(noInput), 125);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a synchronous throw from spawn() is the same spawn_failed outcome',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: ['tr\0ue'] });
    assert.is(r.reason, 'spawn_failed');
    assert.ok(r.error);
    const empty = await capture({ argv: [] });
    assert.is(empty.reason, 'spawn_failed');
  }),
);

test(
  'a child killed by SIGSEGV is signaled, 139',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: [sh('kill-self.sh'), 'SEGV'] });
    assert.is(r.reason, 'signaled');
    assert.is(r.signal, 'SIGSEGV');
    assert.is(r.exitCode, null);
    assert.is(exitCodeFor(r), 139);
    assert.ok(reaped(r.pid));
  }),
);

test(
  'a child killed by SIGKILL from outside is signaled, 137, and reaped',
  withTimeout(20_000, async () => {
    let pid: number | undefined;
    const r = await capture({
      argv: [sh('sleeper.sh')],
      onEvent: (e: SettleEvent) => {
        if (e.type === 'spawned') {
          pid = e.pid;
          process.kill(e.pid, 'SIGKILL');
        }
      },
    });
    killQuietly(pid);
    assert.is(r.reason, 'signaled');
    assert.is(r.signal, 'SIGKILL');
    assert.is(exitCodeFor(r), 137);
    assert.ok(reaped(r.pid));
    assert.equal(taggedAlive(r.tag), []);
  }),
);

test(
  'a multibyte UTF-8 character split across writes arrives byte-exact',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: [sh('split-utf8.sh')] });
    assert.equal([...r.stdout], [0xe2, 0x82, 0xac, 0x0a]);
    assert.is(r.stdout.toString('utf8'), '€\n');
  }),
);

test(
  '10 MB written then an immediate exit: nothing truncated',
  withTimeout(30_000, async () => {
    const size = 10 * 1000 * 1000;
    const r = await capture({ argv: [sh('write-then-exit.sh'), String(size)] });
    assert.is(r.reason, 'exited');
    assert.is(r.exitCode, 0);
    assert.is(r.stdout.length, size);
    assert.is(r.bytesOut, size);
    const pattern = Buffer.from('0123456789abcdef\n');
    const expected = Buffer.alloc(size);
    for (let at = 0; at < size; at += pattern.length) pattern.copy(expected, at);
    assert.ok(r.stdout.equals(expected));
  }),
);

test(
  '64 MiB of random binary output: sha256 equal',
  withTimeout(60_000, async () => {
    const r = await capture({ argv: [sh('random-binary.sh'), String(64 * 1024 * 1024)] });
    assert.is(r.exitCode, 0);
    assert.is(r.stdout.length, 64 * 1024 * 1024);
    assert.is(createHash('sha256').update(r.stdout).digest('hex'), r.stderr.toString().trim());
  }),
);

test(
  'maxBuffer truncates with a flag and keeps reading, so the child is never blocked',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: [sh('write-then-exit.sh'), '1000000'], maxBuffer: 1000, stderr: 'ignore' });
    assert.is(r.reason, 'exited');
    assert.is(r.exitCode, 0);
    assert.is(r.stdout.length, 1000);
    assert.ok(r.stdoutTruncated);
    assert.is(r.bytesOut, 1000000);
  }),
);

test(
  'a failing onEvent observer does not change the outcome',
  withTimeout(20_000, async () => {
    const r = await capture({
      argv: ['sh', '-c', 'exit 4'],
      onEvent: () => {
        throw new Error('observer broke');
      },
    });
    assert.is(r.exitCode, 4);
  }),
);

test('pids printed by fixtures parse', () => {
  assert.equal(pidsIn('12\nx\n 34 \n'), [12, 34]);
});

test.run();
