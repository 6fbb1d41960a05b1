import { cgroupPids } from './cgroup.js';
import { environHasTag, environHasTagPrefix } from './tag.js';
import type { ProcSource } from './types.js';

/** A process we found and may signal: the pid is only ever signalled if its start time still matches. */
export interface OwnedProcess {
  pid: number;
  startTime: number;
}

/** How to recognise what a call owns: its process group and/or its environment tags. */
export interface Ownership {
  /** The child's process group (= the child's pid, it leads a new session). */
  pgid?: number;
  /** The child's start time: an owned process started no earlier (a reused group id cannot qualify). */
  groupStartTime?: number;
  tags: readonly string[];
  /** Tag prefixes: a process carrying any tag that starts with one is owned (every attempt of a run, say). */
  tagPrefixes?: readonly string[];
  /**
   * cgroups whose every process is owned (and those below them). With cgroups and no tags,
   * ownership is read from the cgroups alone — no walk of /proc: nothing can leave them.
   */
  cgroups?: readonly string[];
}

const dead = (state: string) => state === 'Z' || state === 'X';

// Every live process the ownership covers, except ourselves.
export function findOwned(ownership: Ownership, proc: ProcSource): OwnedProcess[] {
  return survey(ownership, proc, []).owned;
}

/** One walk of /proc: what an ownership covers, and who of the same age holds a pipe end. */
export interface Survey {
  owned: OwnedProcess[];
  /**
   * Live processes, owned or not, that started no earlier than the child and hold one of
   * the pipe ends asked about. Only such a process can have inherited the child's end; an
   * older one can hold it only if it was handed the fd (over a socket, or with
   * pidfd_getfd), which `pipeHolders` (every process) is there to find.
   */
  holders: number[];
}

// The ownership scan, also reading the fds of every process young enough to have
// inherited one of `pipeEnds` (none when `pipeEnds` is empty): one walk instead of two.
export function survey(ownership: Ownership, proc: ProcSource, pipeEnds: readonly string[]): Survey {
  const owned: OwnedProcess[] = [];
  const holders: number[] = [];
  const members = new Set((ownership.cgroups ?? []).flatMap(cgroupPids));
  // The walk of every process is needed for tags, and for the process group unless cgroups cover it.
  const walk = ownership.tags.length > 0 || (ownership.tagPrefixes?.length ?? 0) > 0 || ownership.cgroups === undefined;
  for (const pid of walk ? proc.listPids() : members) {
    if (pid === process.pid) continue;
    const stat = proc.readStat(pid);
    if (!stat || dead(stat.state)) continue;
    // Whatever the child started, it started no earlier than the child: older processes are
    // never ours, and skipping them keeps a scan after a quick child to a few reads.
    // (A cgroup's members are ours whatever their age.)
    if (stat.startTime < (ownership.groupStartTime ?? 0) && !members.has(pid)) continue;
    const inGroup = ownership.pgid !== undefined && stat.pgrp === ownership.pgid;
    if (inGroup || members.has(pid) || carriesTag(pid, ownership, proc)) owned.push({ pid, startTime: stat.startTime });
    if (pipeEnds.length > 0 && proc.readFdTargets(pid).some((t) => pipeEnds.includes(t))) holders.push(pid);
  }
  return { owned, holders };
}

function carriesTag(pid: number, ownership: Ownership, proc: ProcSource): boolean {
  const prefixes = ownership.tagPrefixes ?? [];
  if (ownership.tags.length === 0 && prefixes.length === 0) return false;
  const environ = environOf(pid, proc);
  if (environ === undefined) return false;
  return ownership.tags.some((tag) => environHasTag(environ, tag)) || prefixes.some((prefix) => environHasTagPrefix(environ, prefix));
}

// Whether the child's process group may be signalled as a whole: its leader (the child,
// pid = pgid) is still alive, not a zombie, with the start time we recorded, and still leads
// the group. While the leader is unreaped its pid, and so the group id, cannot be reused.
export function groupLeaderAlive(ownership: Ownership, proc: ProcSource): boolean {
  if (ownership.pgid === undefined || !ownership.groupStartTime) return false;
  const stat = proc.readStat(ownership.pgid);
  return stat !== undefined && !dead(stat.state) && stat.startTime === ownership.groupStartTime && stat.pgrp === ownership.pgid;
}

// Whether the pid still names the same live process we found (pid + start time, not a zombie).
export function stillSame(owned: OwnedProcess, proc: ProcSource): boolean {
  const stat = proc.readStat(owned.pid);
  return stat !== undefined && !dead(stat.state) && stat.startTime === owned.startTime;
}

/** How long a scan keeps looking at a process whose environment reads empty… */
const execWindowMs = 5;
/** …and how many times it reads it again at least: on a loaded host one wake-up can take the whole window. */
const execRereads = 8;
const pause = new Int32Array(new SharedArrayBuffer(4));

// A process's environment, read again for a few ms while it reads empty: that is what /proc
// shows of a process in the middle of an exec (its new program's memory is in place, its
// environment not yet), so a tagged process exec'ing at the moment of a scan would be missed
// (~1 read in 180 over the first ms of `sh -c 'exec sleep'`). A process whose environment
// really is empty (`env -i`) carries no tag: it costs this wait once per scan that reads it.
function environOf(pid: number, proc: ProcSource): Buffer | undefined {
  let environ = proc.readEnviron(pid);
  const giveUpAt = Date.now() + execWindowMs;
  for (let reread = 0; environ !== undefined && environ.length === 0 && (reread < execRereads || Date.now() < giveUpAt); reread++) {
    Atomics.wait(pause, 0, 0, 0.25);
    environ = proc.readEnviron(pid);
  }
  return environ;
}
