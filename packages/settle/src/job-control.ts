import { readdirSync, readFileSync } from 'node:fs';

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
