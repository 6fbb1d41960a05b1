import { readdirSync, readFileSync } from 'node:fs';
import { readProcStat } from './identity.js';
import { holdStallClocks, restartStallClocks } from './requests.js';
import { findTagged, type TagQuery } from './teardown-tagged.js';

// ppid, pgrp and session (fields 4, 5, 6) of /proc/<pid>/stat, or undefined when gone.
function groupFields(pid: number | 'self'): { ppid: number; pgrp: number; session: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ', 4);
    return { ppid: Number(rest[1]), pgrp: Number(rest[2]), session: Number(rest[3]) };
  } catch {
    return undefined;
  }
}

/**
 * Whether this process's group is orphaned (POSIX): no member has a parent in another group
 * of the same session, so no job-control shell can ever resume it. The kernel discards a
 * SIGTSTP to such a group when its action is the default; settle's, run-hook's and runplan's
 * Ctrl-Z handlers, which stop with SIGSTOP (never discarded), do the same: stopped there,
 * they and their commands would stay stopped for good, deadlines included.
 * Unknown (no /proc): false, the handler stops as asked.
 */
export function ownGroupOrphaned(): boolean {
  const self = groupFields('self');
  if (self === undefined) return false;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return false;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const member = groupFields(Number(name));
    if (member === undefined || member.pgrp !== self.pgrp) continue;
    const parent = groupFields(member.ppid);
    if (parent !== undefined && parent.pgrp !== self.pgrp && parent.session === self.session) return false;
  }
  return true;
}

/** A process a Ctrl-Z stopped: resumed only while its pid still names it (its start time). */
export interface StoppedProcess {
  pid: number;
  startTime: number;
}

/**
 * Ctrl-Z for a whole tree: SIGSTOP to every live process carrying the tags or prefixes (a
 * `setsid` descendant too, which the command's process group does not hold), scanned again
 * for what forked meanwhile. {@link continueStopped} resumes them.
 */
export function stopTagged(query: TagQuery): StoppedProcess[] {
  const seen = new Map<number, StoppedProcess>();
  for (let round = 0; round < 3; round++) {
    const found = findTagged(query).filter((p) => !seen.has(p.pid));
    if (found.length === 0) break;
    for (const p of found) {
      seen.set(p.pid, { pid: p.pid, startTime: p.startTime });
      signal(p.pid, 'SIGSTOP');
    }
  }
  return [...seen.values()];
}

/** SIGCONT to each process {@link stopTagged} stopped that is still the same process. */
export function continueStopped(stopped: readonly StoppedProcess[]): void {
  for (const p of stopped) if (readProcStat(p.pid)?.startTime === p.startTime) signal(p.pid, 'SIGCONT');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone
  }
}

/**
 * Ctrl-Z for a tool whose commands run in sessions of their own (settle's, run-hook's and
 * runplan's CLIs): the terminal's SIGTSTP reaches the tool alone. On it, the stall clocks are
 * held, `stopChildren` stops what the tool runs (and returns what resumes it), and the tool
 * stops itself (SIGSTOP); the SIGCONT that resumes the tool (`fg`, `bg`) restarts the stall
 * clocks and resumes the children. In an orphaned process group the TSTP is ignored (see
 * {@link ownGroupOrphaned}). Returns what stops listening.
 */
export function relayJobStop(stopChildren: () => () => void): () => void {
  let resume: (() => void) | undefined;
  const onStop = () => {
    if (ownGroupOrphaned()) return;
    holdStallClocks();
    resume = stopChildren();
    process.kill(process.pid, 'SIGSTOP');
  };
  const onContinue = () => {
    restartStallClocks();
    const resumeChildren = resume;
    resume = undefined;
    resumeChildren?.();
  };
  process.on('SIGTSTP', onStop);
  process.on('SIGCONT', onContinue);
  return () => {
    process.off('SIGTSTP', onStop);
    process.off('SIGCONT', onContinue);
  };
}
