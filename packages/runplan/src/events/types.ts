import type { ProcessIdentity } from '@runplan/settle';
import type { FailureClass } from '../repair/repair.js';

export type { FailureClass };

/**
 * The journal events of one logical run (DESIGN "Journal events"). The journal is the only
 * truth: everything resume (issue 7) and repair (issue 8) need is carried here, so a crash
 * anywhere can be answered from these records plus git objects alone.
 *
 *   run-started
 *     └─ per attempt: attempt-started → [pre-run-done] → command-settled → gates-done →
 *        [post-run-done] → integrated → [gates-done (phase integrate)] → checkpoint →
 *        branch-updated → attempt-closed            (any step may jump to attempt-closed)
 *   [landing-started → landed]
 *   run-complete | run-failed   (terminal, exactly one)
 *
 * After a coordinator crash, `runplan stop` instead appends: [usage] → leftovers-ended →
 * attempt-closed (each open attempt) → run-failed (interrupted, stopped_after_crash).
 */

/** Token usage as the agent reported it (zeros for formats that report nothing). */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

/** The phase named in a failure: the step of "One attempt" (or the run) that failed. */
export type Phase = 'setup' | 'pre_run' | 'command' | 'gates' | 'post_run' | 'commit' | 'integrate' | 'land' | 'run';

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
  /** Usage of the runs this one continues (budgets are slug-wide across continuations). */
  usageCarried: UsageTotals;
  costCarried: number;
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

export interface AttemptStartedData {
  taskId: string;
  attempt: number;
  /** settle ownerTag of every process of this attempt: a resumed coordinator tears leftovers down by it. */
  ownerTag: string;
  /** Integration head the worktree starts from. */
  baseCommit: string;
  contractDigest: string;
  /** sha256 of the exact prompt sent (fingerprint input; the text itself may hold evidence). */
  promptDigest: string;
  dir: string;
  worktree: string;
  evidenceDir: string;
  /** Checkpoint ids of the task's needs at dispatch. */
  dependencyCheckpointIds: string[];
}

export interface HookDoneData {
  taskId: string;
  attempt: number;
  ok: boolean;
  reason: string;
  exitCode: number | null;
  durationMs: number;
  evidence: string;
  /** post_run only: whether the hook demoted a successful attempt. */
  demoted?: boolean;
}

export interface CommandSettledData {
  taskId: string;
  attempt: number;
  reason: string;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  teardown: { result: string; survivors: number[]; heldPipe: boolean };
  /** The first transport error (EPIPE on the prompt, a reader error), masked. */
  error: string | null;
  sessionId: string | null;
  usage: UsageTotals;
  costUsd: number | null;
  isError: boolean;
  providerLimited: boolean;
  blocked: string | null;
  finalMessage: string | null;
  warnings: string[];
  transcript: string;
  stderr: string;
}

export interface GateResult {
  argv: string[];
  reason: string;
  exitCode: number | null;
  durationMs: number;
  evidence: string;
}

export interface GatesDoneData {
  taskId: string;
  attempt: number;
  /** `gates` after the command; `integrate` when re-run after a rebase onto a moved head. */
  phase: 'gates' | 'integrate';
  passed: boolean;
  gates: GateResult[];
}

export interface IntegratedData {
  taskId: string;
  attempt: number;
  mode: 'fast_forward' | 'rebase' | 'unchanged';
  attemptBase: string;
  onto: string;
  resultCommit: string;
}

/** The scheduler checkpoint key (reliability plan §6) plus its id: sha256 of the key fields. */
export interface CheckpointData {
  id: string;
  logicalRunId: string;
  planDigest: string;
  taskId: string;
  taskContractDigest: string;
  dependencyCheckpointIds: string[];
  /** Integration head the result was put on top of (the previous checkpoint's result). */
  baseCommit: string;
  resultCommit: string;
  attempt: number;
}

export interface BranchUpdatedData {
  taskId: string | null;
  attempt: number | null;
  branch: string;
  from: string | null;
  to: string;
}

export interface AttemptFailureData {
  class: FailureClass;
  reason: string;
  phase: Phase;
  message: string;
  /** Masked, bounded tail of the failing output (stderr / gate output): fingerprint input. */
  evidenceTail: string;
  /** provider: when the agent said its limit resets (epoch ms). */
  resetAtMs?: number;
  /** disk_full / io_error: the errno and the path the file system refused (null errno: the tool named none). */
  detail?: { errno: string | null; path: string };
}

/**
 * What repair decided after a failed attempt, journaled before any re-dispatch: the
 * fingerprint and counts are rebuilt from these records, so a crash cannot reset a cap.
 */
export interface RepairDecidedData {
  taskId: string;
  attempt: number;
  class: FailureClass;
  reason: string;
  fingerprint: string;
  action: 'retry' | 'stop';
  /** retry: what input changes (evidence, time, base) and how long to wait first. */
  changed: string | null;
  delayMs: number;
  /** stop: repeated_failure | cap_exhausted | not_retryable. */
  stopReason: string | null;
  detail: string | null;
}

/** Usage recounted from a crashed attempt's saved transcript (it never reached command-settled). */
export interface UsageData {
  taskId: string;
  attempt: number;
  usage: UsageTotals;
  costUsd: number | null;
  source: 'transcript';
  transcript: string;
}

/** One round of an improve-verify loop. */
export interface RoundDoneData {
  taskId: string;
  attempt: number;
  round: number;
  verifyPassed: boolean;
  verifyFingerprint: string;
  action: 'done' | 'next_round' | 'stop';
  reason: string | null;
  evidence: string;
}

/** `--retry TASK`: the operator says the cause changed; that task's fingerprints and caps start over. */
export interface OperatorRetryData {
  taskId: string;
}

export interface AttemptClosedData {
  taskId: string;
  attempt: number;
  outcome: 'success' | 'failed' | 'interrupted';
  reason: string;
  class: FailureClass | null;
  phase: Phase | null;
  failure: AttemptFailureData | null;
  checkpointId: string | null;
  evidence: string[];
  /** Processes of the attempt that survived teardown (the checkpoint still stands). */
  survivors: number[];
  durationMs: number;
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
}

export interface RunFailedData {
  logicalRunId: string;
  class: FailureClass;
  reason: string;
  message: string;
  task: string | null;
  phase: Phase | null;
  evidence: string[];
  /** The signal that interrupted the run (SIGINT/SIGTERM), for the exit code. */
  signal: string | null;
  /** disk_full / io_error: the errno and the path the file system refused. */
  detail?: { errno: string | null; path: string };
  tasksDone: number;
  attempts: number;
  usage: UsageTotals;
  costUsd: number;
  durationMs: number;
}

/**
 * A new attempt took a number past ones the journal does not record but the disk does (its
 * attempt dir, evidence dir or git worktree exists): a journal that lost an attempt-started
 * (truncated, restored from a backup) never makes two attempts share a directory.
 */
export interface AttemptRenumberedData {
  taskId: string;
  attempt: number;
  /** The numbers passed over, each with what was found for it. */
  skipped: Array<{ attempt: number; found: string }>;
}

/** Worktrees of a checkpointed task's earlier attempts (failed, interrupted, crashed), removed and pruned. */
export interface WorktreesRemovedData {
  taskId: string;
  worktrees: string[];
}

/** Every event the coordinator writes, by type. */
export interface EventMap {
  'run-started': RunStartedData;
  'coordinator-crashed': CoordinatorCrashedData;
  'leftovers-ended': LeftoversEndedData;
  'journal-failed': JournalFailedData;
  'plan-amended': PlanAmendedData;
  'checkpoint-adopted': CheckpointAdoptedData;
  'repair-decided': RepairDecidedData;
  'round-done': RoundDoneData;
  usage: UsageData;
  'operator-retry': OperatorRetryData;
  'attempt-renumbered': AttemptRenumberedData;
  'attempt-started': AttemptStartedData;
  'worktrees-removed': WorktreesRemovedData;
  'pre-run-done': HookDoneData;
  'command-settled': CommandSettledData;
  'gates-done': GatesDoneData;
  'post-run-done': HookDoneData;
  integrated: IntegratedData;
  checkpoint: CheckpointData;
  'branch-updated': BranchUpdatedData;
  'attempt-closed': AttemptClosedData;
  'landing-started': LandingData;
  landed: LandingData;
  'run-complete': RunCompleteData;
  'run-failed': RunFailedData;
}

export type EventType = keyof EventMap;
export type TerminalType = 'run-complete' | 'run-failed';

export const ZERO_USAGE: UsageTotals = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };

// A cost as shown in receipts and status: whole micro-dollars (0.1709, not the float sum
// 0.17089999999999997). Sums are kept exact-as-floats and rounded only here, so many small
// costs never round away and budgets see what was spent.
export function shownCost(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

// Adds two usage totals field by field.
export function addUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
  };
}
