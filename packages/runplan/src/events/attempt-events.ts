import type { FailureClass, RepairStop } from './reasons.js';
import type { AttemptFailureData, ReceiptReason } from './failure-data.js';
import type { Phase } from './phase.js';
import type { ThreadTotal } from './thread-totals.js';
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
   * The cgroup v2 directory the attempt's processes get their cgroups in (`settle-<ownerTag>-…`),
   * null in group+tag mode: a resumed coordinator ends them there, whatever its own cgroup is.
   */
  cgroupParent: string | null;
  /**
   * `slurm` when the command or the gates run as Slurm jobs named by `ownerTag` (absent:
   * locally): a resumed coordinator or `runplan stop` then also cancels its jobs.
   */
  executor?: 'slurm';
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
  /** The loop round whose agent command this was (`until` tasks); absent outside a loop, and in journals written before rounds were named here. */
  round?: number;
  reason: string;
  /** How settle owned the command's processes: `cgroup` or `group+tag`. */
  ownership: 'cgroup' | 'group+tag';
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  teardown: { result: string; survivors: number[]; heldPipe: boolean };
  /** The agent stayed alive past result_grace after its terminal line and was torn down. */
  lingered?: true;
  /** The first transport error (EPIPE on the prompt, a reader error), masked. */
  error: string | null;
  sessionId: string | null;
  /** What the command spent: for codex, its threads' running totals less what earlier commands counted of them. */
  usage: UsageTotals;
  /** codex only: each thread's last running total, subtracted when a later command resumes it. */
  threads?: ThreadTotal[];
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

/**
 * The coordinator holds a task back after a provider refusal (class provider): until the
 * reset the provider named, else its doubling backoff. Journaled after repair-decided, so
 * progress, `status` and the report can say what the run is waiting for and until when.
 */
export interface ProviderWaitData {
  taskId: string;
  /** The refused attempt; the next one starts at `until` at the earliest. */
  attempt: number;
  /** The refusal's reason (`provider_limited`, …). */
  reason: ReceiptReason;
  /** ISO time the next attempt may start. */
  until: string;
  delayMs: number;
  /** `reset`: the provider named the reset time; `backoff`: it did not ([repair] backoff, doubled). */
  source: 'reset' | 'backoff';
}

/** Usage recounted from a crashed attempt's saved transcript (it never reached command-settled). */
export interface UsageData {
  taskId: string;
  attempt: number;
  usage: UsageTotals;
  /** codex only: as command-settled `threads`. */
  threads?: ThreadTotal[];
  costUsd: number | null;
  source: 'transcript';
  transcript: string;
  /** The loop round whose command the crash interrupted (`until` tasks); absent outside a loop. */
  round?: number;
}

/**
 * A ref runplan keeps (a loop round's tree, a run's result) or cleans up that git would not
 * write or delete. The run goes on; what the ref was to keep may not survive a crash (a
 * round) or a rerun (a result but for the branch), and an undeleted ref is tried again later.
 */
export interface RefFailedData {
  op: 'write' | 'delete';
  ref: string;
  /** The commit a write was to point it at (null for a delete). */
  commit: string | null;
  /** The task whose ref it is (null for a run's). */
  taskId: string | null;
  /** git's stderr, or why it did not run. */
  message: string;
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
