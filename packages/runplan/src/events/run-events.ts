import type { ProcessIdentity } from '@runplan/settle';
import type { FailureClass } from './reasons.js';
import type { CheckpointData, RefFailedData } from './attempt-events.js';
import type { ReceiptReason } from './failure-data.js';
import type { Phase } from './phase.js';
import type { UsageTotals } from './usage.js';

// The data of the run-level events: start, takeovers after a crash, continuation, landing, the receipts.

/** One task as taskListDigest digests it (journals written before it listed these in run-started `tasks`). */
export interface TaskDigest {
  id: string;
  needs: string[];
  contractDigest: string;
}

export interface RunStartedData {
  logicalRunId: string;
  slug: string;
  planFile: string;
  /** The masked plan copy beside the journal. */
  planCopy: string;
  planDigest: string;
  /** How many tasks the plan has. */
  taskCount: number;
  /**
   * sha256 of every task's id, needs and contract digest, in plan order (taskListDigest),
   * written before the first dispatch. One digest, not the list, so the record stays far
   * below the journal's 1 MiB line limit however many tasks there are; a resume checks each
   * checkpoint against the plan's own contract digests, and a continuation checks a stopped
   * task against the digest its own attempt-started journaled. Journals written before
   * this change carry `tasks` (the list) instead.
   */
  tasksDigest: string;
  repo: string;
  stateDir: string;
  base: string;
  baseCommit: string;
  branch: string;
  jobs: number;
  land: string | null;
  /** Attempt directory template (status counts the disk its holding directory uses). */
  workdir: string;
  coordinator: ProcessIdentity;
  /** Runs of this slug closed as `abandoned` (or renamed aside) by `--fresh` before this one. */
  abandoned: string[];
  /** The failed run this one continues (its valid checkpoints are adopted), or null. */
  continues: string | null;
  /**
   * The slug's spend before this run (budgets are slug-wide: across continuations, --fresh
   * and new runs; zero after --reset-budget).
   */
  usageCarried: UsageTotals;
  costCarried: number;
  /** Present (true) only when the operator passed `--reset-budget`: the slug's spend starts over here. */
  budgetReset?: true;
  /** Present (true) only when the operator passed `--allow-background`: the run may have been a background job. */
  allowBackground?: true;
}

/** A resumed coordinator took over an incomplete run whose coordinator died. */
export interface CoordinatorCrashedData {
  /** The dead coordinator, as its lock identity file named it (null: unknown). */
  previous: ProcessIdentity | null;
  /** This coordinator. */
  coordinator: ProcessIdentity;
  /** Attempts that were open, each ended by its ownerTag before anything else ran. */
  crashed: Array<{ taskId: string; attempt: number; ownerTag: string; survivors: number[] }>;
  /** The integration head the branch is reset to (the last valid checkpoint's result). */
  head: string;
  checkpoints: number;
}

/**
 * `runplan stop` on a run whose coordinator died: what it ended of the processes the run
 * left running (found by the run's ownerTag prefix and its open attempts' journaled tags,
 * each verified by pid + start time). With survivors nothing follows it, so the run stays
 * incomplete (a resume or another stop tries again); else its attempts are closed and the
 * run takes its receipt.
 */
export interface LeftoversEndedData {
  /** The `runplan stop` process that ended them. */
  stoppedBy: ProcessIdentity;
  /** The dead coordinator, as the journal last named it (null: unknown). */
  previous: ProcessIdentity | null;
  /** The ts of the run's last record before this one: when it was last heard from. */
  lastSeen: string | null;
  tagPrefix: string;
  /** Attempts the journal shows open (started, never closed). */
  attempts: Array<{ taskId: string; attempt: number; ownerTag: string }>;
  /** none | clean | escalated | failed, as settle's teardown reports it. */
  result: string;
  signalled: number[];
  /** Pids still alive after SIGKILL and a bounded reap. */
  survivors: number[];
}

/**
 * Slurm jobs a crashed coordinator left, found by the run's ownerTag prefix and cancelled
 * (by a resumed coordinator, `--fresh` or `runplan stop`).
 */
export interface JobsCancelledData {
  tagPrefix: string;
  /** Job ids cancelled (TERM, KILL after grace, verified with squeue). */
  cancelled: string[];
  /** Job ids still in the queue after it. */
  survivors: string[];
}

/**
 * A resumed coordinator took over a run whose coordinator exited 5 because the journal
 * refused a write (its note in the run dir said so): not a crash, so the attempts it left
 * open are closed as `journal_failed` and count towards no crash cap.
 */
export interface JournalFailedData {
  /** The coordinator that exited 5. */
  previous: ProcessIdentity | null;
  coordinator: ProcessIdentity;
  /** When it failed, and what the journal's write said. */
  failedAt: string;
  reason: string | null;
  errno: string | null;
  path: string;
  message: string;
  /** Attempts that were open, each ended by its ownerTag before anything else ran. */
  attempts: Array<{ taskId: string; attempt: number; ownerTag: string; survivors: number[] }>;
  head: string;
  checkpoints: number;
}

/** Keys outside every completed task's contract changed between a crash and its resume. */
export interface PlanAmendedData {
  from: string;
  to: string;
  /** The amended plan's task count and task list digest, as in run-started. */
  taskCount: number;
  tasksDigest: string;
  jobs: number;
}

/** A checkpoint of the failed run this one continues, adopted without dispatching its task. */
export interface CheckpointAdoptedData {
  origin: string;
  taskId: string;
  checkpoint: CheckpointData;
}

/** `--retry TASK`: the operator says the cause changed; that task's fingerprints and caps start over. */
export interface OperatorRetryData {
  taskId: string;
}

export interface LandingData {
  branch: string;
  from: string | null;
  to: string;
  already?: boolean;
}

export interface RunCompleteData {
  logicalRunId: string;
  branch: string;
  resultCommit: string;
  landed: string | null;
  tasks: number;
  attempts: number;
  usage: UsageTotals;
  costUsd: number;
  durationMs: number;
  /** Refs git would not write or delete during the run (each also journaled as ref-failed; absent when none). */
  refsFailed?: RefFailedData[];
}

/** One task that stopped for good, as a keep-going receipt lists it. */
export interface FailedTask {
  task: string;
  class: FailureClass;
  reason: ReceiptReason;
  phase: Phase;
}

/** Under keep-going: a task never dispatched because a task it needs (directly or not) stopped for good. */
export interface NotDispatchedTask {
  task: string;
  /** The first task it needs that stopped for good (in the order they stopped). */
  because: string;
}

export interface RunFailedData {
  logicalRunId: string;
  class: FailureClass;
  reason: ReceiptReason;
  message: string;
  task: string | null;
  phase: Phase | null;
  evidence: string[];
  /** The signal that interrupted the run (SIGHUP/SIGINT/SIGTERM), for the exit code. */
  signal: string | null;
  /** disk_full / io_error: the errno and the path the file system refused. */
  detail?: { errno: string | null; path: string };
  /** Under keep-going: every task that stopped for good, in the order they stopped (absent otherwise). */
  failed?: FailedTask[];
  /**
   * An interruption (class `interrupted`) that came after a task had stopped for good: that
   * task's own failure. The receipt's `task`, `phase` and `evidence` are that task's; the
   * interruption did not stop it (absent otherwise).
   */
  firstFailure?: FailedTask;
  /** Under keep-going: the tasks downstream of a stop that were never dispatched (absent otherwise). */
  notDispatched?: NotDispatchedTask[];
  /** Refs git would not write or delete during the run (each also journaled as ref-failed; absent when none). */
  refsFailed?: RefFailedData[];
  tasksDone: number;
  attempts: number;
  usage: UsageTotals;
  costUsd: number;
  durationMs: number;
}
