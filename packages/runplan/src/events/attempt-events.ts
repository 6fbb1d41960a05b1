import type { FailureClass, LoopReason, RepairStop } from './reasons.js';
import type { AttemptFailureData, ReceiptReason } from './failure-data.js';
import type { Phase } from './phase.js';
import type { UsageTotals } from './usage.js';

// The data of the events one attempt journals, in the order it journals them (see events/types.ts).

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
  /**
   * `slurm` when the command or the gates run as Slurm jobs named by `ownerTag` (absent:
   * locally): a resumed coordinator or `runplan stop` then also cancels its jobs.
   */
  executor?: 'slurm';
}

/** A Slurm job of the attempt was accepted (its id is known only after submission). */
export interface JobSubmittedData {
  taskId: string;
  attempt: number;
  /** `command` (also a loop round's) or `gates` (a gate or `until` verify). */
  phase: 'command' | 'gates';
  jobId: string;
  /** The job's name: the attempt's ownerTag. */
  name: string;
}

/** What Slurm recorded of a job of the attempt once it ended. */
export interface JobEndedData {
  taskId: string;
  attempt: number;
  jobId: string;
  /** Slurm's state (COMPLETED, FAILED, TIMEOUT, CANCELLED, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, …). */
  state: string;
  exitCode: number | null;
  nodes: string;
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
  /** The agent stayed alive past result_grace after its terminal line and was torn down. */
  lingered?: true;
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

/**
 * What repair decided after a failed attempt, journaled before any re-dispatch: the
 * fingerprint and counts are rebuilt from these records, so a crash cannot reset a cap.
 */
export interface RepairDecidedData {
  taskId: string;
  attempt: number;
  class: FailureClass;
  reason: ReceiptReason;
  fingerprint: string;
  action: 'retry' | 'stop';
  /** retry: what input changes (evidence, time, base) and how long to wait first. */
  changed: string | null;
  delayMs: number;
  stopReason: RepairStop | null;
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
  reason: LoopReason | null;
  evidence: string;
  /**
   * The round's tree made durable: a commit (parent: the attempt's base) on this side ref,
   * so a loop resumed after a crash continues from it. Null when git refused; absent in
   * journals written before rounds were kept.
   */
  roundRef?: string | null;
  roundCommit?: string | null;
}

/** The last durable round of a crashed attempt's loop: where a resumed loop continues from. */
export interface DurableRound {
  attempt: number;
  round: number;
  ref: string;
  commit: string;
}

export interface AttemptClosedData {
  taskId: string;
  attempt: number;
  outcome: 'success' | 'failed' | 'interrupted';
  reason: ReceiptReason | 'ok';
  class: FailureClass | null;
  phase: Phase | null;
  failure: AttemptFailureData | null;
  checkpointId: string | null;
  evidence: string[];
  /** Processes of the attempt that survived teardown (the checkpoint still stands). */
  survivors: number[];
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
