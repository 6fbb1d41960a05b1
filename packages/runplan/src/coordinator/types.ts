import type { RefusalReason } from '../resume/refusal.js';
import type { JournalFs, JournalRecord, LockHolder } from '@runplan/journal';
import type { AttemptFailureData, FailedTask, NotDispatchedTask, RunCompleteData, RunFailedData } from '../events/types.js';
import type { PlanProblem } from '../plan/types.js';
import type { LiveUsage } from '../events/usage.js';
import type { RunView } from '../events/view.js';
import type { PlanCopyFacts } from '../observe/report-data.js';

/** What `runplan run` is asked to do (the CLI builds it from argv; tests build it directly). */
export interface RunRequest {
  planFile: string;
  repo?: string;
  stateDir?: string;
  jobs?: number;
  fresh?: boolean;
  /** The incomplete run to resume when there are several. */
  run?: string;
  /** `--retry TASK`: tasks whose failure history starts over (the operator says the cause changed). */
  retry?: string[];
  breakLock?: boolean;
  /** `--reset-budget`: the slug's spend starts over with this run (journaled in run-started). */
  resetBudget?: boolean;
  /** `--new-run`: start a new run even when the plan is up to date with its last complete run. */
  newRun?: boolean;
  /** `--keep-going`: as the plan's `keep_going = true` (a task that stops for good stops only its dependents). */
  keepGoing?: boolean;
  /** `--allow-background`: start even as a background job of an interactive shell (journaled in run-started). */
  allowBackground?: boolean;
  /** Aborted by the CLI on SIGHUP/SIGINT/SIGTERM; its `reason` is the signal name. */
  signal: AbortSignal;
  /** Every journal record, once it is durable (progress, `--json`). Must not throw. */
  onRecord?: (record: JournalRecord) => void;
  /** One line for people that is not a journal record (a never-started run closed on the way). */
  onNotice?: (line: string) => void;
  /** Once the run's journal is open, before its first record (see StartInfo); awaited, what it throws is ignored. */
  onStart?: (info: StartInfo) => void | Promise<void>;
  /** A running command's tokens and cost so far (the live table), at most once a second per command; never journaled. Must not throw. */
  onLiveUsage?: (usage: LiveUsage) => void;
  /** The journal writer's file operations (tests inject EIO through it). */
  journalFs?: JournalFs;
}

/** What RunRequest.onStart tells an observer: the run's paths, and what the live table shows of the plan. */
export interface StartInfo {
  runId: string;
  journal: string;
  slug: string;
  tasks: string[];
  /** Whether the plan has a post_run hook: the table names that step only then. */
  postRun: boolean;
  /** Whether it has a pre_run hook: a loop's first round starts after it. */
  preRun: boolean;
  budget: { maxTokens?: number; maxCostUsd?: number };
  /** Each loop task's `rounds` (the M of `round N/M`). */
  rounds: Record<string, number>;
  /** The run is taken over after a crash: its journal already holds the earlier coordinators' records. */
  resumed: boolean;
  /**
   * The run's journal folded so far (a resume's earlier records included), which the
   * coordinator goes on folding every record into before onRecord sees it: an observer can
   * follow it instead of reading the journal and folding again.
   */
  view?: RunView;
}

/**
 * How `runplan run` ended; the CLI maps each kind to one exit code. `view`: the run's whole
 * journal folded in memory as it was written (the report at the receipt uses it instead of
 * reading the journal back); absent when the coordinator did not see every record.
 * `planCopy`: what the report reads from the plan copy this run wrote, from its plan (absent
 * when a secret was masked in the copy: the report reads the copy).
 */
export type RunEnd =
  | { kind: 'invalid_plan'; file: string; problems: PlanProblem[] }
  | { kind: 'refused'; reason: RefusalReason; message: string; hint?: string }
  | { kind: 'locked'; message: string; holder?: LockHolder; slug: string }
  | { kind: 'journal_failed'; message: string; journal: string }
  | { kind: 'complete'; receipt: RunCompleteData; journal: string; view?: RunView | undefined; planCopy?: PlanCopyFacts | undefined }
  | { kind: 'up_to_date'; runId: string; resultCommit: string; journal: string }
  | { kind: 'failed'; receipt: RunFailedData; journal: string; view?: RunView | undefined; planCopy?: PlanCopyFacts | undefined };

/** Why a run stops short of its receipt's success: the failure, the task it ended (null for the run), its evidence paths. */
export interface StopCause {
  failure: AttemptFailureData;
  task: string | null;
  evidence: string[];
  /** Under keep-going: every task that stopped for good (the receipt's `failed`). */
  failed?: FailedTask[];
  /** Under keep-going: the tasks downstream of a stop, never dispatched (the receipt's `notDispatched`). */
  notDispatched?: NotDispatchedTask[];
  /** An interruption after a task stopped for good: that task's own failure (the receipt's `firstFailure`). */
  firstFailure?: FailedTask;
}
