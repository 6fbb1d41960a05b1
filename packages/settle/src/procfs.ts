import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readProcStat } from './identity.js';
import type { ProcSource } from './types.js';

// Numeric entries of /proc: every pid visible to us.
function listPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

// /proc/<pid>/environ as NUL-separated bytes, or undefined when gone or not ours to read.
function readEnviron(pid: number): Buffer | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return undefined;
  }
}

// Where each open fd of a process points (`pipe:[123]`, `/dev/null`, …).
function readFdTargets(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const targets: string[] = [];
  for (const fd of fds) {
    try {
      targets.push(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // closed while we looked
    }
  }
  return targets;
}

// Where fd N of a process points (the child's end of our stdout/stderr pipe, read right after the spawn).
function readFdTarget(pid: number, fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * The descendants of a live process, from /proc/<pid>/task/<tid>/children: a walk of the
 * tree's own files instead of every process on the machine. Best effort (a process
 * reparented to init is not found); at most `limit` pids.
 */
export function descendantsOf(root: number, limit = 4096): number[] {
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0 && found.length < limit) {
    const pid = queue.shift()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1');
      } catch {
        continue;
      }
      for (const word of children.split(' ')) {
        if (!/^\d+$/.test(word)) continue;
        const child = Number(word);
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

export const realProc: ProcSource = { listPids, readStat: readProcStat, readEnviron, readFdTargets, readFdTarget };

// The real /proc with any injected parts (tests) laid over it.
export function procSource(overrides: Partial<ProcSource> | undefined): ProcSource {
  return overrides ? { ...realProc, ...overrides } : realProc;
}

// Why the /proc we read does not name our processes, or undefined when it does. In a pid
// namespace whose /proc is still the host's (`unshare --pid --fork` without `--mount-proc`),
// our children's pids mean other processes there: every ownership check would be wrong.
// (Asked once per process: neither our pid nor the /proc we see can change under us.)
let mismatch: { answer: string | undefined } | undefined;
export function procMismatch(): string | undefined {
  mismatch ??= { answer: readProcMismatch() };
  return mismatch.answer;
}

function readProcMismatch(): string | undefined {
  let self: string;
  try {
    self = readlinkSync('/proc/self');
  } catch {
    return undefined; // no /proc at all: nothing we read could name a stranger
  }
  if (self === String(process.pid)) return undefined;
  return `/proc belongs to another pid namespace (it names us ${self}, we are ${process.pid}); mount a /proc of this namespace (unshare --mount-proc) or run settle outside it`;
}
