import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who a process is, beyond its pid: pids are reused, so every place that names a
 * process (lock files, journal events, status, teardown) carries its start time and boot.
 */
export interface ProcessIdentity {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks since boot when the process started. */
  startTime: number;
  /** /proc/sys/kernel/random/boot_id: a start time only means something within one boot. */
  bootId: string;
  host: string;
}

/** What /proc/<pid>/stat says about a process that we need: its state letter and start time. */
export interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgrp: number;
  startTime: number;
}

let cachedBootId: string | undefined;

// The kernel's id for this boot; identities from another boot name dead processes.
export function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = 'unknown';
    }
  }
  return cachedBootId;
}

// Parses /proc/<pid>/stat. The command name (field 2) may hold spaces and parentheses,
// so fields are counted from after the LAST ')'.
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const rest = text.slice(close + 2).split(' ', 20); // up to field 22, the start time
  // rest[0] is field 3 (state); field N is rest[N - 3].
  const state = rest[0];
  const ppid = Number(rest[1]);
  const pgrp = Number(rest[2]);
  const startTime = Number(rest[19]);
  if (!state || !Number.isInteger(pid) || !Number.isFinite(startTime)) return undefined;
  return { pid, state, ppid, pgrp, startTime };
}

// One buffer for every stat read: an ownership scan reads one per process on the machine.
// A stat line is a few hundred bytes (the command name is at most 16).
const statBuffer = Buffer.allocUnsafe(4096);

// Reads /proc/<pid>/stat, or undefined when the process is gone. open + one read + close
// into a reused buffer (readFileSync also fstat()s and allocates per call).
export function readProcStat(pid: number): ProcStat | undefined {
  const path = `/proc/${pid}/stat`;
  try {
    const fd = openSync(path, 'r');
    let length: number;
    try {
      length = readSync(fd, statBuffer, 0, statBuffer.length, null);
    } finally {
      closeSync(fd);
    }
    if (length < statBuffer.length) return parseProcStat(statBuffer.toString('utf8', 0, length));
    return parseProcStat(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

// The identity of a live process, or undefined when it does not exist (or is a zombie).
export function processIdentity(pid: number): ProcessIdentity | undefined {
  if (pid === process.pid) {
    const startTime = ownStartTime();
    return startTime === undefined ? undefined : { pid, startTime, bootId: bootId(), host: hostname() };
  }
  const stat = readProcStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return undefined;
  return { pid, startTime: stat.startTime, bootId: bootId(), host: hostname() };
}

let cachedStartTime: number | undefined;

// This process's start time (field 22 of /proc/self/stat), read once: it never changes while
// the process lives, and marks, locks and attempts ask for it several times a task.
function ownStartTime(): number | undefined {
  cachedStartTime ??= readProcStat(process.pid)?.startTime;
  return cachedStartTime;
}

/**
 * Whether the process an identity names is still running: same host and boot, the pid
 * exists, is not a zombie, and started at the same tick. Never `kill -0`: in containers
 * PID 1 often never reaps orphans, and `kill -0` succeeds on a zombie forever.
 */
export function isAlive(identity: ProcessIdentity, read: (pid: number) => ProcStat | undefined = readProcStat): boolean {
  if (identity.host !== hostname() || identity.bootId !== bootId()) return false;
  const stat = read(identity.pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return false;
  return stat.startTime === identity.startTime;
}
