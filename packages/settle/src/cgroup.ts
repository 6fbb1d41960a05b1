import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  write as writeFd,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { namePrefix, unavailable, type CgroupPlace, type ChildCgroup, type Found } from './cgroup-types.js';

/**
 * cgroup v2 ownership: each child runs in a fresh cgroup, so "is anything left?" is one read
 * of `cgroup.events` and the end is one write to `cgroup.kill` — nothing the child starts can
 * leave it (short of a privileged process moving itself out on purpose). Where cgroups are
 * found: cgroup-place.ts; the shared types: cgroup-types.ts.
 */

export type {
  CgroupPlace,
  CgroupUnavailableReason,
  ChildCgroup,
  OwnershipFallback,
  OwnershipKind,
  OwnershipMode,
} from './cgroup-types.js';
export { namePrefix } from './cgroup-types.js';

// The name of a call's cgroup: findable from its ownerTag (teardownByTag) and its own tag.
export function cgroupName(tag: string, ownerTag: string | undefined): string {
  return `${namePrefix}${ownerTag !== undefined ? `${ownerTag}-` : ''}${tag}`;
}

/** Parents whose cgroups were seen to have cgroup.kill (a kernel feature: checked once per parent). */
const killable = new Set<string>();

// Makes a fresh cgroup for one child under `parent`, or says why it cannot.
export function makeChildCgroup({ parent, home }: CgroupPlace, name: string): Found<ChildCgroup> {
  const path = join(parent, name);
  try {
    mkdirSync(path);
  } catch (cause) {
    return unavailable('cgroup_unwritable', `cannot create a cgroup in ${parent}: ${(cause as Error).message}`);
  }
  if (!killable.has(parent) && !existsSync(join(path, 'cgroup.kill'))) {
    removeCgroup(path);
    return unavailable('no_cgroup_kill', `${path} has no cgroup.kill (Linux >= 5.14 is needed)`);
  }
  killable.add(parent);
  return { ok: true, value: { path, home } };
}

/**
 * Runs a synchronous spawn with settle itself inside the child's cgroup, then moves settle
 * back: the child is forked there, so it is in its cgroup before its first instruction,
 * without a wrapper program (README, "Ownership"). `home: false` when settle could not
 * move back: the cgroup then holds settle too and must never be killed.
 */
export function spawnInside<T>(cgroup: ChildCgroup, spawn: () => T): Found<{ spawned: T; home: boolean }> {
  try {
    writeFileSync(join(cgroup.path, 'cgroup.procs'), '0');
  } catch (cause) {
    return unavailable('cgroup_join_failed', `cannot move into ${cgroup.path}: ${(cause as Error).message}`);
  }
  let back = false;
  const goHome = () => {
    try {
      writeFileSync(join(cgroup.home, 'cgroup.procs'), '0');
      back = true;
    } catch {
      // reported through `home: false`
    }
  };
  let spawned: T;
  try {
    spawned = spawn();
  } finally {
    goHome();
  }
  return { ok: true, value: { spawned, home: back } };
}

/**
 * The warm-up of a join. Every move of a process between cgroups takes the kernel's
 * cgroup_threadgroup_rwsem for writing. On a kernel whose cgroup2 is mounted without
 * `favordynmods`, the first such move after a quiet spell waits for an RCU grace period
 * (5–15 ms measured here). A move within about one grace period of the last one does not
 * wait. `primeJoin` makes a move that changes nothing, settle into the cgroup it is already
 * in, on the thread pool. The wait then passes there while the caller does other work
 * (creating the attempt dir, its fsyncs), and the join that follows finds the lock warm.
 *
 * A prime in flight moves settle home. Landing between spawnInside's move into a child's
 * cgroup and its spawn, it would start the child outside its cgroup. So every spawn that
 * joins first waits for `joinReady()` (run.ts), and spawnInside is synchronous: no prime can
 * start while it runs.
 */
let priming: Promise<void> | undefined;
/** Homes whose cgroup.procs refused a prime (not root, not delegated, gone): never primed again. */
const unprimable = new Set<string>();
/** Errors that say a home will keep refusing; any other failure only ends that one prime. */
const refusals = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR', 'EBUSY', 'EOPNOTSUPP', 'EINVAL']);
/**
 * The open cgroup.procs of the home last primed: a prime is then one write on the thread pool
 * (not an open, a write and a close queued behind the pool's fsyncs). Replaced only when no
 * prime is in flight, so no write is pending on a descriptor being closed.
 */
let procs: { home: string; fd: number } | undefined;

// One no-op move of settle into `home`, made on the thread pool.
function moveHome(home: string): Promise<void> {
  try {
    if (procs?.home !== home) {
      if (procs !== undefined) closeSync(procs.fd);
      procs = undefined;
      procs = { home, fd: openSync(join(home, 'cgroup.procs'), constants.O_WRONLY) };
    }
  } catch (cause) {
    return Promise.reject(cause);
  }
  const { fd } = procs;
  return new Promise((resolve, reject) => writeFd(fd, '0', (e) => (e ? reject(e) : resolve())));
}

// Starts one no-op move of settle into `home` off the main thread (none while one is in flight).
// A failure changes nothing: the join that follows reports its own. `move` is for tests.
export function primeJoin(home: string, move: (home: string) => Promise<void> = moveHome): void {
  if (priming !== undefined || unprimable.has(home)) return;
  priming = move(home).then(
    () => {
      priming = undefined;
    },
    (cause: unknown) => {
      if (refusals.has(String((cause as NodeJS.ErrnoException | undefined)?.code))) unprimable.add(home);
      priming = undefined;
    },
  );
}

/** The prime in flight, which a spawn that joins must wait for; undefined when there is none. */
export function joinReady(): Promise<void> | undefined {
  return priming;
}

// Whether a cgroup or any cgroup below it has a live process (`populated 1`); false once gone.
export function cgroupPopulated(path: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(join(path, 'cgroup.events'), 'latin1'));
  } catch {
    return false;
  }
}

// Every pid in a cgroup and the cgroups below it (none when it is empty or gone).
export function cgroupPids(path: string): number[] {
  if (!cgroupPopulated(path)) return [];
  const pids: number[] = [];
  const walk = (dir: string) => {
    try {
      for (const word of readFileSync(join(dir, 'cgroup.procs'), 'latin1').split('\n')) if (word !== '') pids.push(Number(word));
    } catch {
      return;
    }
    for (const sub of subCgroups(dir)) walk(sub);
  };
  walk(path);
  return pids;
}

// The cgroups directly below one (its subdirectories).
function subCgroups(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

// KILLs every process in a cgroup and below, atomically (forks included); false when the write failed.
export function killCgroup(path: string): boolean {
  try {
    writeFileSync(join(path, 'cgroup.kill'), '1');
    return true;
  } catch {
    return !existsSync(path);
  }
}

// Removes an empty cgroup and the cgroups below it (deepest first); false when one stays.
export function removeCgroup(path: string): boolean {
  const rmdir = () => {
    try {
      rmdirSync(path);
      return true;
    } catch (cause) {
      return (cause as NodeJS.ErrnoException).code === 'ENOENT';
    }
  };
  if (rmdir()) return true; // the usual case: nothing below it
  for (const sub of subCgroups(path)) removeCgroup(sub);
  return rmdir();
}
