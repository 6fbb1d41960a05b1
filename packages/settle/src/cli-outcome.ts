import { formatDuration, unreachable } from '@runplan/common';
import type { Invocation } from './cli-invocation.js';
import { exitCodeFor } from './exit-code.js';
import type { Execution } from './types.js';

// What settle makes of an execution for its user: the line on stderr, and the exit code
// under SIGALRM and --preserve-status.

// The one line settle prints about an outcome that is not the command's own doing.
export function outcomeLine(inv: Invocation, e: Execution, alarmed: boolean): string | undefined {
  const t = e.teardown;
  const tail = t.result === 'none' ? '' : `; teardown ${t.result} (signalled ${t.signalled.join(' ') || 'none'})`;
  if (t.result === 'failed') return `settle: teardown_failed: pids ${t.survivors.join(' ')} survived SIGKILL`;
  switch (e.reason) {
    case 'exited':
    case 'signaled':
      return undefined;
    case 'timed_out':
      if (alarmed) return `settle: timed_out: SIGALRM received${tail}`;
      return `settle: timed_out: ${inv.command[0]} still running at the --deadline of ${formatDuration(e.deadlineMs ?? 0)}${tail}`;
    case 'stalled':
      return `settle: stalled: ${inv.command[0]} wrote no stdout for ${formatDuration(e.stallMs ?? 0)}${tail}`;
    case 'interrupted':
      return `settle: interrupted: ${e.interruptSignal ?? 'abort'} received${tail}`;
    case 'spawn_failed': {
      if (e.error?.where === 'cgroup') {
        return `settle: ${e.error.code}: ${e.error.message}\n  hint: --ownership auto falls back to the process group and tag`;
      }
      const hint =
        e.error?.code === 'ENOENT' && e.error.where === 'spawn'
          ? e.error.message.endsWith('was not found)')
            ? '\n  hint: fix the #! line, or run it through its interpreter'
            : '\n  hint: not found; check the name and PATH'
          : e.error?.code === 'EACCES' && e.error.where === 'spawn' && !e.error.message.endsWith('(it is a directory, not a program)')
            ? '\n  hint: not executable; chmod +x it or run it through its interpreter'
            : '';
      return `settle: spawn_failed: ${e.error?.message ?? 'the command could not start'}${hint}`;
    }
    default:
      return unreachable(e.reason);
  }
}

// SIGALRM to settle is a timeout, as in GNU timeout: the teardown it caused reads as timed_out.
export function alarmAsTimeout(e: Execution): Execution {
  const { interruptSignal: _alarm, ...rest } = e;
  return { ...rest, reason: 'timed_out' };
}

// --preserve-status: the command's own status even when it timed out or stalled (128+N when
// a signal ended it); settle's own failures keep their codes.
export function preservedStatus(e: Execution): number {
  if ((e.reason !== 'timed_out' && e.reason !== 'stalled') || e.teardown.result === 'failed') return exitCodeFor(e);
  if (e.signal) return exitCodeFor({ ...e, reason: 'signaled' });
  return e.exitCode ?? 125;
}
