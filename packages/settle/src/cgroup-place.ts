import { existsSync, readFileSync, statfsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { unavailable, type CgroupPlace, type Found } from './cgroup-types.js';

// Where cgroup v2 is mounted, which cgroup settle is in, and where a call's cgroup may go.

const cgroup2Magic = 0x63677270; // CGROUP2_SUPER_MAGIC

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
