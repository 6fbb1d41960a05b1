import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cgroupPopulated, removeCgroup } from './cgroup.js';
import { namePrefix } from './cgroup-types.js';

/**
 * The empty cgroups a settle that was killed (SIGKILL, OOM) left in a parent: it removes its
 * child's cgroup itself, so one that outlives it stays until someone removes it. Each process
 * sweeps a parent once, just after its first spawn there (on the next turn of the event loop,
 * with synchronous calls: a few directory reads, and no thread pool started for them). A cgroup is removed
 * only when all of this holds: its name is a settle cgroup's; the process that made it (the
 * pid in its tag) no longer exists; it was made over a minute ago (a settle in another pid
 * namespace, whose pid we cannot see, joins its cgroup within milliseconds of making it); and
 * it is empty, with no process below it either (`populated 0`: removing a cgroup removes its
 * empty sub-cgroups first, and one inside a live tree may be a nested settle's, about to be
 * joined; rmdir refuses a populated cgroup itself).
 */
export const STALE_AFTER_MS = 60_000;

const swept = new Set<string>();

// Sweeps the parent of `cgroup` once per process, on the next turn of the event loop; never throws.
export function sweepAfterSpawn(cgroup: string): void {
  const parent = dirname(cgroup);
  if (swept.has(parent)) return;
  swept.add(parent);
  setImmediate(() => {
    try {
      sweepStaleCgroups(parent);
    } catch {
      // An unreadable parent: nothing to sweep.
    }
  });
}

// Removes the stale settle cgroups directly under `parent`; returns their names.
export function sweepStaleCgroups(parent: string, now = Date.now()): string[] {
  const removed: string[] = [];
  for (const entry of readdirSync(parent, { withFileTypes: true })) {
    if (!entry.isDirectory() || !entry.name.startsWith(namePrefix)) continue;
    const creator = creatorPid(entry.name);
    if (creator === undefined || exists(creator)) continue;
    const path = join(parent, entry.name);
    try {
      if (now - statSync(path).mtimeMs < STALE_AFTER_MS) continue;
    } catch {
      continue;
    }
    if (!cgroupPopulated(path) && removeCgroup(path)) removed.push(entry.name);
  }
  return removed;
}

// The pid of the process that made a cgroup `settle-[<ownerTag>-]<tag>`: the tag's first field, base 36.
export function creatorPid(name: string): number | undefined {
  const tag = name.slice(name.lastIndexOf('-') + 1);
  const end = tag.indexOf('_');
  if (end === -1) return undefined;
  const field = tag.slice(0, end);
  if (!/^[0-9a-z]+$/.test(field)) return undefined;
  const pid = Number.parseInt(field, 36);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

// Whether a process with this pid exists (ours or another user's).
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
