import { readFileSync } from 'node:fs';

/** This process's job-control facts, from /proc/self/stat (fields 1, 5, 7 and 8). */
export interface JobControl {
  pid: number;
  /** Its process group (field 5). */
  pgrp: number;
  /** Its controlling terminal's device number, 0 when it has none (field 7). */
  ttyNr: number;
  /** The terminal's foreground process group, -1 when none (field 8). */
  tpgid: number;
}

// The job-control fields of a /proc/<pid>/stat line (undefined when it cannot be read).
export function parseStat(text: string): JobControl | undefined {
  // comm (field 2) is in parentheses and may hold spaces or `)`: fields 3… follow the last `)`.
  const close = text.lastIndexOf(')');
  if (close === -1) return undefined;
  const pid = Number.parseInt(text, 10);
  const rest = text.slice(close + 2).split(' ');
  const [pgrp, ttyNr, tpgid] = [rest[2], rest[4], rest[5]].map((f) => Number(f));
  if (![pid, pgrp, ttyNr, tpgid].every((n) => Number.isInteger(n))) return undefined;
  return { pid, pgrp: pgrp!, ttyNr: ttyNr!, tpgid: tpgid! };
}

// Whether a process is a background job of an interactive shell: it has a terminal, leads
// its own process group (a job-control shell makes a job's first process the group leader)
// and that group is not the terminal's foreground group. Being outside the foreground group
// alone is not enough: `timeout 2h runplan run …` typed at a prompt runs runplan in timeout's
// group, which is not the foreground one either, and it is a foreground command.
export function isBackgroundJob(j: JobControl): boolean {
  return j.ttyNr !== 0 && j.pgrp === j.pid && j.tpgid > 0 && j.tpgid !== j.pgrp;
}

// This process's job control, or undefined where /proc cannot tell (then nothing is refused).
export function ownJobControl(): JobControl | undefined {
  try {
    return parseStat(readFileSync('/proc/self/stat', 'utf8'));
  } catch {
    return undefined;
  }
}
