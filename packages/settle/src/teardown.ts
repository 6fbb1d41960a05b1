import { killCgroup } from './cgroup.js';
import { findOwned, groupLeaderAlive, stillSame, type OwnedProcess, type Ownership } from './owned.js';
import { descendantsOf } from './procfs.js';
import type { ProcSource, SettleEvent, TeardownReport } from './types.js';
import { sleep, within } from './wait.js';

/** How long the final reap after KILL may take before the rest are reported as survivors. */
export const reapMs = 2000;
/** Re-scan intervals after a signal: quick at first (most trees die at once), then steady. */
const pollStepsMs = [5, 10, 20, 40];
const pollMaxMs = 50;

export interface TreeTeardown {
  ownership: Ownership;
  proc: ProcSource;
  signal: NodeJS.Signals;
  graceMs: number;
  onEvent?: (event: SettleEvent) => void;
  why: 'timed_out' | 'stalled' | 'interrupted' | 'finished' | 'leftovers';
  /** Resolves early when the caller cannot wait any longer (an interruption during grace). */
  hurry?: Promise<void>;
  /** Resolves when the child (the group leader) exits: a reason to re-scan at once. */
  exited?: Promise<void>;
  /** Resolves when the child's pipes reach EOF, so whoever held them is gone: a reason to re-scan at once. */
  pipesClosed?: Promise<void>;
  /**
   * An ownership scan the caller made a moment ago, used as the first scan when the group is
   * not signalled first (after the group signal, a scan is always made afresh). Each pid in
   * it is still checked against its start time before it is signalled.
   */
  found?: OwnedProcess[];
}

export const noTeardown = (): TeardownReport => ({ result: 'none', signalled: [], survivors: [], heldPipe: false });

/**
 * Ends everything an ownership covers. When the child still leads its process group (pid
 * and start time checked, not a zombie), the group gets the first signal at once, before
 * any /proc scan; then a scan finds tagged processes outside the group (and anything the
 * group signal did not reach) and signals them one by one. SIGCONT follows every first
 * signal, so a stopped process can act on it. Re-scans for new forks follow at short,
 * growing intervals (or at once when the child exits) until all are gone or `grace`
 * passes; then KILL the same way, re-scanning for up to `reapMs`. A pid is signalled only
 * while its start time still matches what we found, so a reused pid is never hit.
 */
export async function endTree(t: TreeTeardown): Promise<TeardownReport> {
  const signalled = new Set<number>();
  const announced = new Set<number>(); // reached by the first group signal
  const leader = t.ownership.pgid;
  const groupFirst = leader !== undefined && groupLeaderAlive(t.ownership, t.proc);
  if (groupFirst) {
    t.onEvent?.({ type: 'teardown-started', why: t.why, signal: t.signal });
    // Who the group signal reaches, for the report: the leader's descendants still in its
    // group (a walk of the tree's own /proc files, not of every process).
    const members = descendantsOf(leader).filter((pid) => {
      const stat = t.proc.readStat(pid);
      return (
        stat !== undefined &&
        stat.state !== 'Z' &&
        stat.state !== 'X' &&
        stat.pgrp === leader &&
        stat.startTime >= (t.ownership.groupStartTime ?? 0)
      );
    });
    if (send(-leader, t.signal)) {
      if (t.signal !== 'SIGKILL' && t.signal !== 'SIGCONT') send(-leader, 'SIGCONT');
      for (const pid of [leader, ...members]) {
        signalled.add(pid);
        announced.add(pid);
        t.onEvent?.({ type: 'signalled', pid, signal: t.signal });
      }
    }
  }
  const first = !groupFirst && t.found ? t.found : findOwned(t.ownership, t.proc);
  if (first.length === 0 && !groupFirst) return noTeardown();
  if (!groupFirst) t.onEvent?.({ type: 'teardown-started', why: t.why, signal: t.signal });

  const hit = (owned: OwnedProcess[], signal: NodeJS.Signals, seen: Set<number>) => {
    for (const p of owned) {
      if (seen.has(p.pid) || !stillSame(p, t.proc)) continue;
      seen.add(p.pid);
      if (!send(p.pid, signal)) continue;
      if (signal !== 'SIGKILL' && signal !== 'SIGCONT') send(p.pid, 'SIGCONT');
      signalled.add(p.pid);
      t.onEvent?.({ type: 'signalled', pid: p.pid, signal });
    }
  };
  let hurried = false;
  void t.hurry?.then(() => (hurried = true));
  let woken = false;
  const wake = Promise.race([t.hurry, t.exited, t.pipesClosed].filter((p) => p !== undefined)).then(() => (woken = true));
  // Waits for the next re-scan: the next step of the backoff, never past `until`, sooner
  // when the child exits or the caller hurries (once each: after that, plain steps).
  // True when it waited all the way to `until` (timers and Date.now() may disagree by a ms).
  let step = 0;
  const pause = async (until: number): Promise<boolean> => {
    const remaining = until - Date.now();
    const ms = Math.max(0, Math.min(pollStepsMs[step] ?? pollMaxMs, remaining));
    step++;
    if (woken) {
      await sleep(ms);
      return ms >= remaining;
    }
    return !(await within(wake, ms)) && ms >= remaining;
  };

  // Who is left: what the ownership covers now, plus whoever we found before that is still
  // the same live process (pid + start time). A process that is exiting, or that wrote over
  // its environment, may no longer show its tag, but it is still ours until it is gone.
  const rescan = (before: OwnedProcess[]): OwnedProcess[] => {
    const now = findOwned(t.ownership, t.proc);
    const found = new Set(now.map((p) => p.pid));
    return [...now, ...before.filter((p) => !found.has(p.pid) && stillSame(p, t.proc))];
  };

  // What the group signal reached is not signalled again; a tagged process outside the group
  // is, once. A process in the group that the scans find is either one the group signal
  // reached or a fork made after it: the group's own answer to the signal (a TERM handler's
  // `git stash`, its last output), which GNU timeout lets run too. It is waited for, and KILL
  // after grace ends it like the rest.
  const termed = new Set<number>(announced);
  const outsideGroup = (owned: OwnedProcess[]) => (groupFirst ? owned.filter((p) => t.proc.readStat(p.pid)?.pgrp !== leader) : owned);
  hit(outsideGroup(first), t.signal, termed);
  const graceEnds = Date.now() + t.graceMs;
  let left = first;
  while (left.length > 0 && Date.now() < graceEnds && !hurried) {
    const graceOver = (await pause(graceEnds)) || Date.now() >= graceEnds;
    // Grace is over and the verified group still has its leader: KILL is due whatever a scan
    // would find, so it goes first and the scans follow in the KILL loop below.
    if (graceOver && groupLeaderAlive(t.ownership, t.proc)) break;
    left = rescan(left);
    hit(outsideGroup(left), t.signal, termed);
  }
  const report = (result: TeardownReport['result'], survivors: number[]): TeardownReport => ({
    result,
    signalled: [...signalled].sort((a, b) => a - b),
    survivors,
    heldPipe: false,
  });
  // Cut short by a hurry, the last scan may be a step old: look again before escalating.
  if (left.length > 0 && hurried) left = rescan(left);
  if (left.length === 0) return report(signalled.size > 0 ? 'clean' : 'none', []);

  const reapEnds = Date.now() + reapMs;
  step = 0;
  for (;;) {
    // KILL cannot be caught, so the group and then each process found get it (twice is
    // harmless); a cgroup gets it all at once, forks included, through cgroup.kill.
    if (leader !== undefined && groupLeaderAlive(t.ownership, t.proc)) send(-leader, 'SIGKILL');
    for (const cgroup of t.ownership.cgroups ?? []) killCgroup(cgroup);
    hit(left, 'SIGKILL', new Set());
    await pause(reapEnds);
    left = rescan(left);
    if (left.length === 0) return report('escalated', []);
    if (Date.now() >= reapEnds) break;
  }
  const survivors = left.map((p) => p.pid).sort((a, b) => a - b);
  return report('failed', survivors);
}

// kill(2) that reports whether the signal was delivered instead of throwing.
function send(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
