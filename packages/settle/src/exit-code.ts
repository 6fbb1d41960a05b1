import { constants } from 'node:os';
import { unreachable } from '@runplan/common';
import type { Execution } from './types.js';

// The errors of the exec itself: GNU `timeout` exits 126 for each (any exec error but ENOENT).
// A fork or pipe that could not be made (EAGAIN, ENOMEM, EMFILE) stays ours: 125.
const execFailures = new Set(['EACCES', 'ENOEXEC', 'EISDIR', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'E2BIG', 'ETXTBSY', 'EPERM', 'ELIBBAD']);

const signalNumber = (signal: NodeJS.Signals): number => constants.signals[signal] ?? 0;

/**
 * The exit code a tool that ran this child should end with, following GNU `timeout`: the
 * child's code; 124 timed out or stalled; 125 our own failure, including a teardown we
 * could not verify (it outranks 124); 126 not executable; 127 not found; 128+N signal N.
 */
export function exitCodeFor(e: Execution): number {
  if (e.teardown.result === 'failed') return 125;
  switch (e.reason) {
    case 'exited':
      return e.exitCode ?? 125;
    case 'signaled':
      return e.signal ? 128 + signalNumber(e.signal) : 125;
    case 'timed_out':
    case 'stalled':
      return 124;
    case 'interrupted':
      return e.interruptSignal ? 128 + signalNumber(e.interruptSignal) : 130;
    case 'spawn_failed':
      // Only the command itself not found / not executable is 127 / 126; a missing cwd or input is ours.
      if (!e.error || (e.error.where !== undefined && e.error.where !== 'spawn')) return 125;
      if (e.error.code === 'ENOENT') return 127;
      if (execFailures.has(e.error.code)) return 126;
      return 125;
    default:
      return unreachable(e.reason);
  }
}
