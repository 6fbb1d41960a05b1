import type { DurableRound, RoundDoneData } from './loop-events.js';

/**
 * The loop rounds each attempt made durable (a round-done with its ref and commit), and
 * which attempts a coordinator crash or a failed journal write closed: where a resumed loop
 * continues from (events/view.ts folds them).
 */
export class DurableRounds {
  private readonly byAttempt = new Map<string, { taskId: string; durable?: DurableRound }>();
  /** Attempts a crash or a failed journal write closed, by `task.attempt`: their rounds are still used. */
  private readonly crashed = new Set<string>();

  // A round-done: its round becomes the attempt's durable one when it kept a ref and is later than the last.
  roundDone(d: RoundDoneData): void {
    const key = `${d.taskId}.${d.attempt}`;
    const known = this.byAttempt.get(key)?.durable;
    const durable =
      typeof d.roundRef === 'string' && typeof d.roundCommit === 'string' && (known === undefined || known.round < d.round)
        ? { attempt: d.attempt, round: d.round, ref: d.roundRef, commit: d.roundCommit }
        : known;
    this.byAttempt.set(key, { taskId: d.taskId, ...(durable !== undefined ? { durable } : {}) });
  }

  // An attempt (`task.attempt`) closed by a coordinator crash or a failed journal write.
  crashClosed(key: string): void {
    this.crashed.add(key);
  }

  /** The last durable loop round of attempts that are still `open` or that a crash closed, per task. */
  ofTasks(open: ReadonlyMap<string, unknown>): Map<string, DurableRound> {
    const durable = new Map<string, DurableRound>();
    for (const [key, r] of this.byAttempt) {
      if (r.durable === undefined || !(open.has(key) || this.crashed.has(key))) continue;
      const known = durable.get(r.taskId);
      if (known === undefined || known.attempt < r.durable.attempt) durable.set(r.taskId, r.durable);
    }
    return durable;
  }
}
