import type { Plan } from '../plan/types.js';
import type { DurableRound, EventMap, EventType, UsageTotals } from '../events/types.js';
import type { LiveUsage } from '../events/usage.js';
import type { RunPaths, SlugPaths } from '../host/state.js';
import type { DiskFault } from '../host/disk.js';

/** Appends one event to the run's journal (durable before it resolves); rejects with JournalFailure. */
export type Emit = <T extends EventType>(type: T, data: EventMap[T]) => Promise<void>;

/** The journal itself failed (write or sync error): the run stops, exit 5, no receipt. */
export class JournalFailure extends Error {
  override readonly name = 'JournalFailure';
}

/** Runs async sections one at a time, in call order. */
export class Serial {
  #tail: Promise<void> = Promise.resolve();
  // Runs `fn` when every earlier section has finished.
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn);
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

/**
 * The integration head and the one lock that serializes integration: only one attempt at a
 * time rebases, re-runs gates, checkpoints and moves the branch.
 */
export class Integration extends Serial {
  constructor(
    public head: string,
    readonly branchRef: string,
  ) {
    super();
  }
}

/** What one attempt needs from its coordinator. */
export interface RunContext {
  plan: Plan;
  runId: string;
  startedAt: Date;
  run: RunPaths;
  slug: SlugPaths;
  repo: string;
  planDigest: string;
  contractDigests: ReadonlyMap<string, string>;
  secrets: readonly string[];
  /** Commit identity fallback for repositories without one configured. */
  gitIdentity: Record<string, string>;
  /** Aborted on SIGHUP/SIGINT/SIGTERM or a journal failure: every child of every attempt is torn down. */
  signal: AbortSignal;
  emit: Emit;
  /** A write the file system refused: the run stops (every attempt torn down) and ends disk_full / io_error. */
  diskFailed(fault: DiskFault): void;
  integration: Integration;
  /** Checkpoint ids of finished tasks, by task id. */
  checkpoints: ReadonlyMap<string, string>;
  /**
   * Serializes `git worktree add/remove/prune`: git names every worktree's admin dir after
   * its basename (`tree`, `tree1`, …) and removes `.git/worktrees` when it empties, so a
   * concurrent add and remove can fail with "could not create directory".
   */
  worktrees: Serial;
  /** The last durable loop round of crashed attempts, per task: a resumed loop continues from it. */
  durableRounds: ReadonlyMap<string, DurableRound>;
  /** A loop round's ref git wrote: the run's one listing of the round refs (RunRounds) stays current. */
  roundKept(ref: string): void;
  /** Attempt directory template (plan `workdir` or the default under the slug dir). */
  workdirTemplate: string;
  /** The ledger's last running total per agent thread (codex): updated as each command settles. */
  threadTotals: Map<string, UsageTotals>;
  /** The slug's spend so far (the ledger's): what {{budget.remaining_*}} is left of when an attempt starts. */
  spent(): { usage: UsageTotals; costUsd: number };
  /** A running command's spend so far (RunRequest.onLiveUsage); never throws, never journaled. */
  liveUsage(u: LiveUsage): void;
}
