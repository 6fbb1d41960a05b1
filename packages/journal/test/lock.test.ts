// Kernel-held locks: held while the socket is bound, probed only by connect(), and an
// identity file that tells a dead holder from one we cannot verify.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bootId, processIdentity } from '@runplan/settle';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import { acquireLock, isLockHeld, readLockHolder, type LockEvent, type LockHolder } from '../src/index.js';

const dir = tempDir('journal-lock-');
test.after(() => dir.cleanup());

let n = 0;
function slugDir(): { path: string; identityPath: string } {
  const path = join(dir.path, `slug-${++n}`);
  mkdirSync(path);
  return { path, identityPath: join(path, 'coordinator.json') };
}

function identity(overrides: Partial<LockHolder>): LockHolder {
  return { pid: 999_999, startTime: 1, bootId: bootId(), host: hostname(), acquiredAt: '2026-01-01T00:00:00.000Z', ...overrides };
}

test(
  'a lock on a directory (the coordinator slug lock): held, named, refused to a second taker, released',
  withTimeout(10_000, async () => {
    const { path, identityPath } = slugDir();
    assert.not.ok(await isLockHeld(path));
    const held = await acquireLock(path, { identityPath, details: { role: 'coordinator' } });
    assert.ok(held.ok);
    if (!held.ok) return;
    assert.ok(await isLockHeld(path));
    const holder = readLockHolder(identityPath);
    assert.equal([holder?.pid, holder?.startTime, holder?.['role']], [process.pid, processIdentity(process.pid)!.startTime, 'coordinator']);
    const second = await acquireLock(path, { identityPath, waitMs: 50 });
    assert.ok(!second.ok && second.error.reason === 'lock_held');
    if (!second.ok) assert.match(second.error.message, new RegExp(`pid ${process.pid} \\(start time ${holder!.startTime}\\)`));
    await held.value.release();
    assert.not.ok(await isLockHeld(path));
    assert.not.ok(existsSync(identityPath));
  }),
);

test(
  'update rewrites the identity with new details, keeping who holds it and since when; release still removes it; a released lock refuses',
  withTimeout(10_000, async () => {
    const { path, identityPath } = slugDir();
    const held = await acquireLock(path, { identityPath, details: { runId: 'minted', role: 'coordinator' } });
    assert.ok(held.ok);
    if (!held.ok) return;
    const before = readLockHolder(identityPath)!;
    await held.value.update({ runId: 'resumed', pid: 1, acquiredAt: 'never' });
    const after = readLockHolder(identityPath)!;
    assert.equal(after, { ...before, runId: 'resumed' }, 'only the details changed');
    assert.equal(held.value.holder, after);
    await held.value.release();
    assert.not.ok(existsSync(identityPath), 'still recognised as ours at release');
    try {
      await held.value.update({ runId: 'late' });
      assert.unreachable('update after release');
    } catch (e) {
      assert.match((e as Error).message, /was released/);
    }
    assert.not.ok(existsSync(identityPath), 'nothing written after release');
  }),
);

test(
  'isLockHeld only connects: asking never takes the lock',
  withTimeout(10_000, async () => {
    const { path, identityPath } = slugDir();
    for (let i = 0; i < 5; i++) assert.not.ok(await isLockHeld(path));
    assert.not.ok(existsSync(identityPath));
    const held = await acquireLock(path, { identityPath });
    assert.ok(held.ok, 'still free after being asked about');
    if (held.ok) await held.value.release();
  }),
);

test(
  'a stale identity from this host with another boot id is a dead holder: taken over',
  withTimeout(10_000, async () => {
    const { path, identityPath } = slugDir();
    writeFileSync(identityPath, JSON.stringify(identity({ bootId: 'another-boot', pid: process.pid })));
    const events: LockEvent[] = [];
    const held = await acquireLock(path, { identityPath, onEvent: (e) => events.push(e) });
    assert.ok(held.ok);
    const acquired = events.find((e) => e.type === 'lock-acquired');
    assert.is(acquired?.type === 'lock-acquired' && acquired.previous?.bootId, 'another-boot');
    assert.is(readLockHolder(identityPath)?.bootId, bootId());
    if (held.ok) await held.value.release();
  }),
);

test(
  'a stale identity naming a dead pid of this boot is taken over',
  withTimeout(10_000, async () => {
    const { path, identityPath } = slugDir();
    const dead = spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' });
    writeFileSync(identityPath, JSON.stringify(identity({ pid: dead.pid ?? 999_999, startTime: 5 })));
    const held = await acquireLock(path, { identityPath });
    assert.ok(held.ok);
    if (held.ok) await held.value.release();
  }),
);

test(
  'an identity from another host cannot be verified: foreign_host unless breakLock',
  withTimeout(10_000, async () => {
    const { path, identityPath } = slugDir();
    writeFileSync(identityPath, JSON.stringify(identity({ host: 'build-7.elsewhere', pid: 4312 })));
    const refused = await acquireLock(path, { identityPath, waitMs: 1000 });
    assert.ok(!refused.ok && refused.error.reason === 'foreign_host');
    if (!refused.ok) assert.match(refused.error.message, /pid 4312 .* on build-7\.elsewhere/);
    assert.not.ok(await isLockHeld(path), 'refusing released the socket');
    const broken = await acquireLock(path, { identityPath, breakLock: true });
    assert.ok(broken.ok);
    if (broken.ok) await broken.value.release();
  }),
);

test(
  'a live process of this boot named by the identity whose socket does not answer is not taken over',
  withTimeout(10_000, async () => {
    const { path, identityPath } = slugDir();
    const parent = processIdentity(process.ppid)!;
    writeFileSync(identityPath, JSON.stringify(identity({ pid: parent.pid, startTime: parent.startTime })));
    const refused = await acquireLock(path, { identityPath, waitMs: 100 });
    assert.ok(!refused.ok && refused.error.reason === 'lock_held');
    if (!refused.ok) assert.match(refused.error.message, /does not answer/);
    const broken = await acquireLock(path, { identityPath, breakLock: true });
    assert.ok(broken.ok);
    if (broken.ok) await broken.value.release();
  }),
);

test(
  'a lock whose directory does not exist is a bad path',
  withTimeout(5_000, async () => {
    const result = await acquireLock(join(dir.path, 'nope', 'x'), { identityPath: join(dir.path, 'nope', 'x.json') });
    assert.ok(!result.ok && result.error.reason === 'bad_path');
  }),
);

test.run();
