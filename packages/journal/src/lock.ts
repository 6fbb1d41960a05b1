import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import net from 'node:net';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { err, ok, type Result } from '@runplan/common';
import { bootId, isAlive, processIdentity, type ProcessIdentity } from '@runplan/settle';
import { ioError, type JournalError, type LockHolder } from './errors.js';
import { fsyncDirectory } from './fs.js';
import { lockSocketName, lockTarget } from './lock-name.js';

export { lockSocketName, lockTarget } from './lock-name.js';

export type { LockHolder } from './errors.js';

/** A lock this process holds; the kernel releases it if the process dies. */
export interface HeldLock {
  readonly path: string;
  readonly identityPath: string;
  readonly holder: LockHolder;
  /**
   * Rewrites the identity file with these fields changed (whole, as at acquisition): for a
   * holder whose details are known only once it holds the lock. Who and since when stay.
   */
  update(details: Record<string, unknown>): Promise<void>;
  release(): Promise<void>;
}

export interface AcquireLockOptions {
  /** File naming the holder (written temp → fsync → rename, so it appears whole). */
  identityPath: string;
  /** How long to wait for a live holder before refusing with `lock_held`. Default 0. */
  waitMs?: number;
  /** Take the lock even when the identity names a holder that cannot be verified. */
  breakLock?: boolean;
  /** Extra fields written into the identity file. */
  details?: Record<string, unknown>;
  onEvent?: (event: LockEvent) => void;
}

export type LockEvent =
  | { type: 'lock-waiting'; path: string; holder?: LockHolder }
  | { type: 'lock-acquired'; path: string; previous?: LockHolder; broken: boolean };

// Human words for a holder: `pid 4312 (start time 88123) on host since 2026-…`.
export function describeHolder(holder: LockHolder | undefined): string {
  if (!holder) return 'a process that has not written its identity yet';
  return `pid ${holder.pid} (start time ${holder.startTime}) on ${holder.host} since ${holder.acquiredAt}`;
}

// Reads a lock's identity file; undefined when it is missing or not an identity.
export function readLockHolder(identityPath: string): LockHolder | undefined {
  try {
    const value = JSON.parse(readFileSync(identityPath, 'utf8')) as Partial<LockHolder> | null;
    if (
      value &&
      typeof value.pid === 'number' &&
      typeof value.startTime === 'number' &&
      typeof value.bootId === 'string' &&
      typeof value.host === 'string' &&
      typeof value.acquiredAt === 'string'
    )
      return value as LockHolder;
  } catch {
    // missing or unreadable: nobody is named
  }
  return undefined;
}

/**
 * Whether someone holds the lock on `path`, answered by connecting to its socket — never
 * by binding it (that would take the lock) and never by a file's age. A stopped or busy
 * holder still holds: the kernel accepts the connection into its backlog.
 */
export function isLockHeld(path: string): Promise<boolean> {
  const target = lockTarget(path);
  if (target === undefined) return Promise.resolve(false);
  return new Promise((resolvePromise) => {
    const socket = net.connect({ path: lockSocketName(target) });
    const done = (held: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolvePromise(held);
    };
    // Unix connects answer at once; a stuck one is treated as held (fail closed).
    const timer = setTimeout(() => done(true), 5000);
    timer.unref();
    socket.once('connect', () => done(true));
    socket.once('error', (e: NodeJS.ErrnoException) => done(!(e.code === 'ECONNREFUSED' || e.code === 'ENOENT')));
  });
}

// Binds the abstract socket; resolves the listening server, or the bind error.
function tryListen(name: string): Promise<net.Server | NodeJS.ErrnoException> {
  return new Promise((resolvePromise) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', (e: NodeJS.ErrnoException) => resolvePromise(e));
    server.listen({ path: name }, () => {
      server.removeAllListeners('error');
      server.on('error', () => {});
      // The lock must never keep its process alive.
      server.unref();
      resolvePromise(server);
    });
  });
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolvePromise) => server.close(() => resolvePromise()));
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// Writes the identity whole or not at all: temp file, fsync, rename over the old one.
async function writeIdentity(identityPath: string, holder: LockHolder): Promise<void> {
  const temp = join(dirname(identityPath), `.${basename(identityPath)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(holder)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, identityPath);
  } catch (e) {
    await unlink(temp).catch(() => {});
    throw e;
  }
  await fsyncDirectory(dirname(identityPath));
}

/**
 * Takes the lock on `path` (a file or directory; see lockTarget). A socket that answers
 * means a live holder: wait up to `waitMs`, then refuse with `lock_held` naming it. A free
 * socket means the last holder is dead (the kernel dropped its socket), except that the
 * socket only answers inside one network namespace, so an identity we cannot verify —
 * another host, or a live process of this boot that does not answer — is refused
 * (`foreign_host` / `lock_held`) unless `breakLock`.
 */
export async function acquireLock(path: string, options: AcquireLockOptions): Promise<Result<HeldLock, JournalError>> {
  const target = lockTarget(path);
  if (target === undefined) return err({ reason: 'bad_path', path, message: `${path}: its directory does not exist` });
  const name = lockSocketName(target);
  const deadline = Date.now() + Math.max(0, options.waitMs ?? 0);
  const self = processIdentity(process.pid) ?? { pid: process.pid, startTime: 0, bootId: bootId(), host: hostname() };
  let waited = false;
  let delay = 20;
  for (;;) {
    const bound = await tryListen(name);
    let unverifiable: LockHolder | undefined;
    if (bound instanceof net.Server) {
      const previous = readLockHolder(options.identityPath);
      const refusal = previous && !options.breakLock ? cannotVerify(previous, self) : undefined;
      if (refusal === 'foreign_host') {
        await closeServer(bound);
        return err({
          reason: 'foreign_host',
          path,
          message: `${path} was locked by ${describeHolder(previous)}, another host whose process cannot be checked from here`,
        });
      }
      if (refusal === undefined) {
        const holder: LockHolder = { ...options.details, ...self, acquiredAt: new Date().toISOString(), lock: target };
        try {
          await writeIdentity(options.identityPath, holder);
        } catch (e) {
          await closeServer(bound);
          // The error is the locked file's (its hint names what to validate), the message names the identity file.
          return err({ ...ioError(options.identityPath, 'writing the lock identity', e), path });
        }
        options.onEvent?.({
          type: 'lock-acquired',
          path,
          ...(previous ? { previous } : {}),
          broken: Boolean(options.breakLock && previous),
        });
        return ok(heldLock(path, options.identityPath, holder, bound));
      }
      await closeServer(bound);
      unverifiable = previous;
    } else if (bound.code !== 'EADDRINUSE') {
      return err(ioError(path, 'binding the lock socket for', bound));
    }
    const holder = unverifiable ?? readLockHolder(options.identityPath);
    if (Date.now() >= deadline) {
      const why = unverifiable ? ' (alive, but its lock socket does not answer: another network namespace?)' : '';
      return err({
        reason: 'lock_held',
        path,
        ...(holder ? { holder } : {}),
        message: `${path} is held by ${describeHolder(holder)}${why}`,
      });
    }
    if (!waited) {
      waited = true;
      options.onEvent?.({ type: 'lock-waiting', path, ...(holder ? { holder } : {}) });
    }
    await sleep(Math.min(delay + Math.floor(Math.random() * delay), Math.max(1, deadline - Date.now())));
    delay = Math.min(delay * 2, 100);
  }
}

// Why a previous holder named in the identity file cannot be taken over, if it cannot.
function cannotVerify(previous: LockHolder, self: ProcessIdentity): 'foreign_host' | 'alive' | undefined {
  if (previous.host !== self.host) return 'foreign_host';
  if (previous.bootId !== self.bootId) return undefined; // another boot: certainly dead
  if (previous.pid === self.pid && previous.startTime === self.startTime) return undefined; // ours, released
  return isAlive({ pid: previous.pid, startTime: previous.startTime, bootId: previous.bootId, host: previous.host }) ? 'alive' : undefined;
}

function heldLock(path: string, identityPath: string, holder: LockHolder, server: net.Server): HeldLock {
  let released: Promise<void> | undefined;
  return {
    path,
    identityPath,
    get holder() {
      return holder;
    },
    async update(details) {
      if (released !== undefined) throw new Error(`the lock on ${path} was released: its identity is not ours to write`);
      const { pid, startTime, bootId, host, acquiredAt } = holder;
      holder = { ...holder, ...details, pid, startTime, bootId, host, acquiredAt };
      await writeIdentity(identityPath, holder);
    },
    release() {
      released ??= (async () => {
        // Remove the identity first, and only if it is still ours: once the socket is
        // closed the next holder may already have written its own.
        const current = readLockHolder(identityPath);
        if (current && current.pid === holder.pid && current.startTime === holder.startTime && current.acquiredAt === holder.acquiredAt)
          await unlink(identityPath).catch(() => {});
        await closeServer(server);
      })();
      return released;
    },
  };
}
