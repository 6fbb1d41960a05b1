import type { ChildCgroup } from './cgroup.js';
import { removeCgroup } from './cgroup.js';
import { drainRest, pipeHolders } from './drain.js';
import { findOwned, survey, type OwnedProcess, type Ownership, type Survey } from './owned.js';
import type { ChildOutputs } from './outputs.js';
import type { Requests } from './requests.js';
import { endTree, noTeardown } from './teardown.js';
import type { PipeHolders, ProcSource, SettleEvent, TeardownReport } from './types.js';
import { within } from './wait.js';

const pollMs = 50;
/** After a teardown's KILL, how long the `exit` event may trail the reap we saw in /proc. */
const exitTrailMs = 1000;

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the end of one call works with: the child's pipes, what it owns, and the rules. */
export interface EndgameContext {
  outputs: ChildOutputs;
  ownership: Ownership;
  proc: ProcSource;
  /** `/proc` targets of the child's ends of our stdout/stderr pipes, read right after the spawn. */
  childEnds: readonly string[];
  /** The child's own cgroup in cgroup mode. */
  cgroup: ChildCgroup | undefined;
  requests: Requests;
  /** Resolves at the child's `exit` event. */
  exited: Promise<void>;
  /** The exit as far as seen (read through a call: the `exit` listener assigns it while we wait). */
  exitInfo: () => ExitInfo | undefined;
  graceMs: number;
  killSignal: NodeJS.Signals;
  killAfterMs: number;
  /** Absolute time (Date.now()) of the deadline, if any: delivery stops there too. */
  deadlineAt: number | undefined;
  emit: (event: SettleEvent) => void;
}

/**
 * How a call ends once the child exited or was asked to end:
 *
 *   exit ─▶ drain stdout/stderr until EOF or grace ─▶ end leftovers of the owned tree
 *            (held pipe noted)                          (after the rest of grace)
 *   request ─▶ killSignal to the owned tree, grace, KILL, reap ─▶ the last drain
 */
export class Endgame {
  /** stdout/stderr were still held open by someone `grace` after the child exited. */
  heldPipe = false;
  /** The child's cgroup was found empty and removed already (nothing left to release). */
  cgroupRemoved = false;

  constructor(private readonly c: EndgameContext) {}

  // The child exited on its own: drain, then give leftovers the rest of grace, then end them.
  async afterExit(): Promise<TeardownReport> {
    const { outputs, requests, graceMs, emit } = this.c;
    const exit = this.c.exitInfo();
    emit({ type: 'exited', exitCode: exit?.code ?? null, signal: exit?.signal ?? null });
    const exitAt = Date.now();
    if (!outputs.finished) await within(Promise.race([outputs.done, requests.termination]), graceMs);
    let left: OwnedProcess[] | undefined;
    if (!outputs.finished) {
      const found = this.survey();
      left = found.owned;
      if (found.holders === 'unknown' || found.holders.length > 0) {
        this.heldPipe = true;
        emit({ type: 'held-pipe', holders: found.holders });
      }
    }
    // Leftovers get the rest of grace to finish on their own, then are torn down. A cgroup
    // that can be removed is empty: nothing is left, and it is released at once.
    const { cgroup } = this.c;
    if (left === undefined && cgroup !== undefined && removeCgroup(cgroup.path)) {
      this.cgroupRemoved = true;
      left = [];
    }
    left ??= this.owned();
    while (left.length > 0 && Date.now() < exitAt + graceMs && !requests.requested) {
      await within(requests.termination, Math.max(0, Math.min(pollMs * 2, exitAt + graceMs - Date.now())));
      left = this.owned();
    }
    const teardown =
      left.length > 0
        ? await endTree({
            ownership: this.c.ownership,
            proc: this.c.proc,
            signal: this.c.killSignal,
            graceMs: this.c.killAfterMs,
            onEvent: emit,
            why: requests.requested ?? 'leftovers',
            hurry: requests.termination,
            found: left,
            ...(outputs.finished ? {} : { pipesClosed: outputs.done }),
          })
        : noTeardown();
    await this.finalDrain();
    return teardown;
  }

  // Someone asked for the end before the child exited: tear the tree down, then drain.
  async afterRequest(): Promise<TeardownReport> {
    const { requests, emit } = this.c;
    const teardown = await endTree({
      ownership: this.c.ownership,
      proc: this.c.proc,
      signal: this.c.killSignal,
      graceMs: this.c.killAfterMs,
      onEvent: emit,
      why: requests.requested!,
      exited: this.c.exited,
    });
    await within(this.c.exited, exitTrailMs);
    const late = this.c.exitInfo();
    if (late) emit({ type: 'exited', exitCode: late.code, signal: late.signal });
    await this.finalDrain();
    return teardown;
  }

  private owned(): OwnedProcess[] {
    return findOwned(this.c.ownership, this.c.proc);
  }

  // The ownership scan and who still holds the child's end of our pipes, in one walk: a
  // holder that inherited the end started no earlier than the child, so the scan reads the
  // fds of those processes too. Only when none of them holds it are the fds of every process
  // read, for an older holder that was handed the fd. Without the child's ends (it closed
  // them before we looked) no pipe can be matched: while it owns processes, the pipe counts
  // as held by holders `'unknown'` (naming the owned processes would name non-holders too).
  private survey(): { owned: Survey['owned']; holders: PipeHolders } {
    const { childEnds, proc } = this.c;
    if (childEnds.length === 0) {
      const owned = this.owned();
      return { owned, holders: owned.length > 0 ? 'unknown' : [] };
    }
    const found = survey(this.c.ownership, proc, childEnds);
    return found.holders.length > 0 ? found : { owned: found.owned, holders: pipeHolders(childEnds, proc) };
  }

  // The last read: until EOF, or until grace says the pipe is held or makes no progress.
  private async finalDrain(): Promise<void> {
    const { outputs, requests } = this.c;
    if (outputs.finished) return;
    const rules = {
      holders: () => this.survey().holders,
      graceMs: this.c.graceMs,
      // Patient only after a normal exit, when /proc shows nobody else holding the pipe.
      patient: !requests.requested && this.c.childEnds.length > 0,
      ...(requests.requested ? {} : { stop: requests.termination }), // an interruption during the drain cuts it short
      ...(this.c.deadlineAt !== undefined ? { until: this.c.deadlineAt } : {}),
    };
    if (await drainRest(outputs, rules)) this.heldPipe = true;
  }
}
