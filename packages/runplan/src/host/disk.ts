import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AttemptFailureData, Phase } from '../events/types.js';
import type { DiskReason } from '../events/reasons.js';

/**
 * A full disk is an answer, not a crash. Every write runplan makes (journal, plan copy,
 * evidence, transcripts, attempt dirs, worktrees, git objects) that the file system
 * refuses with one of these errnos ends the run with class `environment`, reason
 * `disk_full` (`io_error` for EIO), and uses up no repair allowance: the changed input that
 * allows the next dispatch is the disk itself, checked with statfs against `min_free`.
 */
export type DiskErrno = 'ENOSPC' | 'EDQUOT' | 'EFBIG' | 'EIO';

const STRERROR: Record<DiskErrno, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
  EIO: 'input/output error',
};

export type { DiskReason };

/** A write the file system refused. */
export interface DiskFault {
  /** null: the tool that wrote (git) said its write failed but not with which errno. */
  errno: DiskErrno | null;
  /** The file (or the directory) being written. */
  path: string;
}

/** What a receipt's and a failure's `detail` carry for a disk failure. */
export type DiskDetail = DiskFault;

export function isDiskErrno(code: unknown): code is DiskErrno {
  return typeof code === 'string' && Object.hasOwn(STRERROR, code);
}

export function diskReason(errno: DiskErrno | null): DiskReason {
  return errno === 'EIO' ? 'io_error' : 'disk_full';
}

// Whether a failure's reason is one of the disk's (class environment).
export function isDiskReason(reason: string): reason is DiskReason {
  return reason === 'disk_full' || reason === 'io_error';
}

// A thrown fs error (or a journal failure, which carries its fs error as data) as a disk
// fault; undefined when it is some other error. `path` is what runplan meant to write (an
// atomic write fails on its temp file), else the error's own path.
export function diskFaultOf(e: unknown, path?: string): DiskFault | undefined {
  if (e === null || typeof e !== 'object') return undefined;
  const direct = e as { code?: unknown; path?: unknown; error?: { code?: unknown; path?: unknown } };
  const code = isDiskErrno(direct.code) ? direct.code : isDiskErrno(direct.error?.code) ? direct.error.code : undefined;
  if (code === undefined) return undefined;
  const at = path ?? (typeof direct.path === 'string' ? direct.path : typeof direct.error?.path === 'string' ? direct.error.path : '');
  return { errno: code, path: at };
}

const ERRNO_TEXT: ReadonlyArray<[RegExp, DiskErrno]> = [
  [/\bENOSPC\b|no space left on device|out of diskspace/i, 'ENOSPC'],
  [/\bEDQUOT\b|disk quota exceeded/i, 'EDQUOT'],
  [/\bEFBIG\b|file too large/i, 'EFBIG'],
  [/\bEIO\b|input\/output error/i, 'EIO'],
];

/**
 * A disk fault in what a tool said (git's stderr, a workdir error message). git's checkout
 * reports a failed write() as "unable to write file X" without the errno; a write that
 * fails after its file was created is the disk's doing (space, quota, size limit), so it
 * counts as disk_full with no errno.
 */
export function diskFaultInText(text: string, path: string): DiskFault | undefined {
  for (const [pattern, errno] of ERRNO_TEXT) if (pattern.test(text)) return { errno, path };
  if (/unable to write file|short write/i.test(text)) return { errno: null, path };
  return undefined;
}

// One line for people: what the file system said, about which path.
export function describeFault(fault: DiskFault): string {
  const what = fault.errno === null ? 'a write failed (the tool named no errno)' : `${STRERROR[fault.errno]} (${fault.errno})`;
  return `${what} writing ${fault.path}`;
}

// A disk fault as an attempt's (or the run's) failure: class environment, never repaired.
export function diskFailure(fault: DiskFault, phase: Phase): AttemptFailureData {
  return {
    class: 'environment',
    reason: diskReason(fault.errno),
    phase,
    message: describeFault(fault),
    evidenceTail: '',
    detail: { errno: fault.errno, path: fault.path },
  };
}

/** Free space of the file system holding a path. */
export interface FreeSpace {
  /** The path statfs was asked about: the given one, or its nearest existing ancestor. */
  path: string;
  /** Bytes an unprivileged writer may still use (f_bavail × f_bsize). */
  freeBytes: number;
}

// statfs of the file system a path is (or would be) on: a path that no longer exists is
// answered by its nearest existing ancestor. Undefined when nothing could be asked.
export async function freeSpace(path: string): Promise<FreeSpace | undefined> {
  let at = path;
  for (;;) {
    try {
      const s = await statfs(at);
      return { path: at, freeBytes: Number(s.bavail) * Number(s.bsize) };
    } catch (e) {
      const parent = dirname(at);
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) return undefined;
      at = parent;
    }
  }
}

/** What a refusal to dispatch onto a disk still too full says (exit 3). */
export interface RoomRefusal {
  reason: 'disk_full';
  message: string;
  hint: string;
}

// Refuses while the file system that failed has less than `minFree` bytes free.
export async function roomRefusal(path: string, minFree: number, why: string, planFile: string): Promise<RoomRefusal | undefined> {
  const free = await freeSpace(path);
  if (free === undefined || free.freeBytes >= minFree) return undefined;
  return {
    reason: 'disk_full',
    message: `${why}; the file system of ${path} has ${formatBytes(free.freeBytes)} free, below min_free ${formatBytes(minFree)}`,
    hint: `make room on the file system of ${path} (or lower min_free in ${planFile}), then run the same command again`,
  };
}

const UNITS: Record<string, number> = {
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1000 ** 4,
  tib: 1024 ** 4,
};

// A size: bytes as an integer, or a string like "1GiB", "500MiB", "64KiB", "2GB", "4096".
export function parseSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$/.exec(value);
  if (!m) return undefined;
  const unit = UNITS[m[2]!.toLowerCase() || 'b'];
  if (unit === undefined) return undefined;
  const bytes = Math.round(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

// Bytes for people: 0 B, 512 B, 1.5 KiB, 12.0 MiB, 1.0 GiB.
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  return `${value.toFixed(1)} ${units[i]}`;
}
