import type { AttemptResult } from '../attempt/run-attempt.js';
import { addUsage, ZERO_USAGE, type AttemptFailureData, type DurableRound, type UsageTotals } from '../events/types.js';
import type { TaskHistory } from '../repair/index.js';
import type { RecoveredRun } from '../resume/recover.js';

/** The run's in-memory truth: the mirror of what its journal proves, kept as attempts settle. */
export class RunLedger {
  /** Checkpoint ids of finished tasks, by task id: these tasks are never dispatched again. */
  readonly checkpoints = new Map<string, string>();
  /** Highest attempt number per task in this run (new attempts take the next free one). */
  readonly attempts = new Map<string, number>();
  /** Highest attempt number per task in the slug's history: numbering never goes back under it. */
  attemptFloor = new Map<string, number>();
  /** Attempts this run dispatched (a resume counts the ones before the crash too). */
  attemptCount = 0;
  /** Worktrees of each task's attempts that did not succeed: removed once it is checkpointed. */
  readonly trees = new Map<string, Array<{ attempt: number; worktree: string }>>();
  /** Failure history per task (counts and fingerprints), rebuilt from the journal on resume. */
  readonly histories = new Map<string, TaskHistory>();
  /** The last failure of a task that will be retried: its evidence goes into the next prompt. */
  readonly lastFailure = new Map<string, { attempt: number; failure: AttemptFailureData; worktree?: string }>();
  /** The last durable loop round of crashed attempts: a resumed loop continues from it. */
  readonly durableRounds = new Map<string, DurableRound>();
  /** Tokens the run's agents reported (carried over a resume); the budget is checked against it. */
  usage: UsageTotals = ZERO_USAGE;
  costUsd = 0;
  /** The last running total of each agent thread the slug's commands reported (codex): a resumed thread adds only the rest. */
  readonly threadTotals = new Map<string, UsageTotals>();

  // Loads what a journal proved: checkpoints (the tasks never dispatched again), attempt
  // numbers, usage so far. The integration head is the caller's (RecoveredRun.head).
  load(recovered: RecoveredRun): void {
    for (const cp of recovered.checkpoints) this.checkpoints.set(cp.taskId, cp.id);
    for (const [task, n] of recovered.attempts) this.attempts.set(task, n);
    this.attemptCount = recovered.attemptsTotal;
    for (const [task, trees] of recovered.trees) this.trees.set(task, [...trees]);
    this.usage = recovered.usage;
    this.costUsd = recovered.costUsd;
    for (const [task, h] of recovered.histories) this.histories.set(task, h);
    for (const [task, f] of recovered.lastFailure) this.lastFailure.set(task, f);
    for (const [task, d] of recovered.durableRounds) this.durableRounds.set(task, d);
  }

  // A continuation's attempts start over: numbering (above the slug's floor), count and loop rounds.
  forgetAttempts(): void {
    this.attempts.clear();
    this.attemptCount = 0;
    this.durableRounds.clear();
  }

  // The next attempt of a task was given number `attempt` and dispatched.
  dispatched(taskId: string, attempt: number): void {
    this.attempts.set(taskId, attempt);
    this.attemptCount += 1;
  }

  // Usage some agent reported (an attempt's, or a crashed attempt's recounted from its transcript).
  spent(usage: UsageTotals, costUsd: number): void {
    this.usage = addUsage(this.usage, usage);
    this.costUsd += costUsd;
  }

  // An attempt closed: its usage counts; a success is the task's checkpoint and clears the
  // failure the next prompt would have quoted.
  settled(r: AttemptResult): void {
    this.spent(r.usage, r.costUsd);
    if (r.ok) {
      this.checkpoints.set(r.taskId, r.checkpoint.id);
      this.lastFailure.delete(r.taskId);
    }
  }

  totalAttempts(): number {
    return this.attemptCount;
  }
}
