import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * cgroup v2 ownership: each child runs in a fresh cgroup, so "is anything left?" is one read
 * of `cgroup.events` and the end is one write to `cgroup.kill` — nothing the child starts can
 * leave it (short of a privileged process moving itself out on purpose).
 */

/** What a caller asks for: a cgroup when one can be made (`auto`), always one, or never. */
export type OwnershipMode = 'auto' | 'cgroup' | 'group+tag';
/** What a call used: its own cgroup, or the process group plus the environment tag. */
export type OwnershipKind = 'cgroup' | 'group+tag';

/** Why no cgroup could be used; each is a snake_case slug with a message for people. */
export type CgroupUnavailableReason =
  | 'no_cgroup2'
  | 'cgroup_unknown'
  | 'cgroup_parent_invalid'
  | 'cgroup_unwritable'
  | 'no_cgroup_kill'
  | 'cgroup_join_failed';

export interface OwnershipFallback {
  reason: CgroupUnavailableReason;
  message: string;
}

/** A cgroup made for one child, and where settle itself lives (to return there after the spawn). */
export interface ChildCgroup {
  path: string;
  /** settle's own cgroup directory when the cgroup was made: where it moves back to after the spawn. */
  home: string;
}

const cgroup2Magic = 0x63677270; // CGROUP2_SUPER_MAGIC
/** Every cgroup settle makes is named `settle-[<ownerTag>-]<tag>`; tags never hold `-`. */
export const namePrefix = 'settle-';

type Found<T> = { ok: true; value: T } | { ok: false; fallback: OwnershipFallback };
const unavailable = (reason: CgroupUnavailableReason, message: string): { ok: false; fallback: OwnershipFallback } => ({
  ok: false,
  fallback: { reason, message },
});

let mounts: { root: string; point: string }[] | undefined;

// Mount points of cgroup2 file systems with the root they show, from /proc/self/mountinfo
// (read once: a cgroup2 mount does not come and go under a running settle).
function cgroup2Mounts(): { root: string; point: string }[] {
  mounts ??= parseCgroup2Mounts(readMountinfo());
  return mounts;
}

function readMountinfo(): string {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return '';
  }
}

function parseCgroup2Mounts(mountinfo: string): { root: string; point: string }[] {
  const found: { root: string; point: string }[] = [];
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (after?.split(' ')[0] !== 'cgroup2' || before === undefined) continue;
    const fields = before.split(' ');
    const root = fields[3];
    const point = fields[4];
    if (root !== undefined && point !== undefined) found.push({ root: unescapeMount(root), point: unescapeMount(point) });
  }
  return found;
}

// mountinfo writes space, tab, newline and backslash as octal escapes (`\040`).
function unescapeMount(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

// The directory of the cgroup v2 cgroup this process is in, found through a cgroup2 mount.
export function ownCgroupDir(): Found<string> {
  const all = cgroup2Mounts();
  if (all.length === 0) return unavailable('no_cgroup2', 'no cgroup2 file system is mounted (/proc/self/mountinfo)');
  let path: string | undefined;
  try {
    path = /^0::(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  } catch {
    path = undefined;
  }
  if (path === undefined) return unavailable('cgroup_unknown', '/proc/self/cgroup names no cgroup v2 cgroup (no 0:: line)');
  for (const { root, point } of all) {
    if (root === '/') return { ok: true, value: resolve(point, `.${path}`) };
    if (path === root || path.startsWith(`${root}/`)) return { ok: true, value: resolve(point, `.${path.slice(root.length)}`) };
  }
  return unavailable('cgroup_unknown', `our cgroup ${path} is outside every cgroup2 mount`);
}

/** Directories already seen to be cgroup v2 cgroups (a directory does not change file system under us). */
const cgroup2Dirs = new Set<string>();

// Whether a directory is in a cgroup2 file system.
function isCgroup2Dir(dir: string): boolean {
  if (cgroup2Dirs.has(dir)) return true;
  try {
    if (statfsSync(dir).type !== cgroup2Magic || !existsSync(join(dir, 'cgroup.procs'))) return false;
  } catch {
    return false;
  }
  cgroup2Dirs.add(dir);
  return true;
}

/** Where one call's cgroup goes, and where settle itself lives now (to return there after the spawn). */
export interface CgroupPlace {
  parent: string;
  home: string;
}

// Where a call's cgroups go: the configured parent, else our own cgroup's directory.
export function cgroupParentDir(configured: string | undefined): Found<string> {
  const place = cgroupPlace(configured);
  return place.ok ? { ok: true, value: place.value.parent } : place;
}

// The parent a call's cgroup goes in and settle's own cgroup, found with one read of /proc/self/cgroup.
export function cgroupPlace(configured: string | undefined): Found<CgroupPlace> {
  const home = ownCgroupDir();
  if (configured !== undefined) {
    const dir = resolve(configured);
    if (!isCgroup2Dir(dir)) return unavailable('cgroup_parent_invalid', `cgroup parent ${dir} is not a cgroup v2 directory`);
    return home.ok ? { ok: true, value: { parent: dir, home: home.value } } : home;
  }
  if (!home.ok) return home;
  if (!isCgroup2Dir(home.value)) return unavailable('cgroup_unknown', `our cgroup directory ${home.value} is not readable as cgroup v2`);
  return { ok: true, value: { parent: home.value, home: home.value } };
}

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
