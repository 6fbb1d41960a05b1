import type { ChildOutputs } from './outputs.js';
import type { PipeHolders, ProcSource } from './types.js';
import { within } from './wait.js';

const pollMs = 100;
/**
 * How long the last read waits for EOF before asking /proc who still holds the pipe. After
 * a teardown the holders are usually gone and EOF is already on its way; a walk of every
 * process's fds is only worth making when it is not.
 */
const eofFirstMs = 20;

// Processes other than us that still hold the child's end of our pipes open.
export function pipeHolders(childEnds: readonly string[], proc: ProcSource): number[] {
  return proc.listPids().filter((pid) => pid !== process.pid && proc.readFdTargets(pid).some((t) => childEnds.includes(t)));
}

export interface DrainRules {
  /**
   * Processes that still hold the child's end of a pipe (and that we could not end). Asked
   * once, and only when EOF did not come within a moment. `'unknown'` counts as held.
   */
  holders: () => PipeHolders;
  graceMs: number;
  /**
   * When nobody holds the pipe, what is left in it is finite and only waits for the
   * consumer (`settle -- make | less`): keep reading at the consumer's pace instead of
   * giving up after `grace` without progress. Only when `holders()` is empty.
   */
  patient: boolean;
  /** Absolute time (Date.now()) past which we stop anyway: the deadline bounds delivery too. */
  until?: number;
  /** Resolves when the caller wants out now (an interruption). */
  stop?: Promise<void>;
}

/**
 * The last read after the child exited (or its tree was torn down): keep reading until
 * EOF, but give up after `grace` when a process we could not end still holds the pipe,
 * and — unless patient — after `grace` without progress. Returns whether it gave up on a
 * held pipe.
 */
export async function drainRest(outputs: ChildOutputs, rules: DrainRules): Promise<boolean> {
  const start = Date.now();
  let seen = outputs.bytesSeen;
  let progressAt = start;
  let stopped = false;
  void rules.stop?.then(() => (stopped = true));
  let holders: PipeHolders | undefined;
  let wait = Math.min(eofFirstMs, rules.graceMs);
  while (!outputs.finished) {
    await within(rules.stop ? Promise.race([outputs.done, rules.stop]) : outputs.done, wait);
    wait = pollMs;
    // A timer can run before the I/O of the same turn: let a pending EOF be read before asking.
    if (!outputs.finished && holders === undefined) await new Promise<void>((resolve) => setImmediate(resolve));
    if (outputs.finished) break;
    holders ??= rules.holders();
    const held = holders === 'unknown' || holders.length > 0;
    const now = Date.now();
    if (outputs.bytesSeen !== seen) {
      seen = outputs.bytesSeen;
      progressAt = now;
    }
    if (held && now - start >= rules.graceMs) return true;
    if (stopped || (rules.until !== undefined && now >= rules.until)) return false;
    if (!(rules.patient && !held) && now - progressAt >= rules.graceMs) return false;
  }
  return false;
}
