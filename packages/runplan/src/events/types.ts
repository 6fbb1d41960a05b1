import type {
  AttemptClosedData,
  AttemptRenumberedData,
  AttemptStartedData,
  BranchUpdatedData,
  CheckpointData,
  CommandSettledData,
  GatesDoneData,
  HookDoneData,
  IntegratedData,
  ProviderWaitData,
  RefFailedData,
  RepairDecidedData,
  UsageData,
  WorktreesRemovedData,
} from './attempt-events.js';
import type { JobEndedData, JobSubmittedData } from './job-events.js';
import type { RoundDoneData, RoundRestoredData } from './loop-events.js';
import type {
  CheckpointAdoptedData,
  CoordinatorCrashedData,
  JobsCancelledData,
  JournalFailedData,
  LandingData,
  LeftoversEndedData,
  OperatorRetryData,
  PlanAmendedData,
  RunCompleteData,
  RunFailedData,
  RunStartedData,
} from './run-events.js';

export { FAILURE_CLASSES, type FailureClass, type FailureReason, type RepairStop } from './reasons.js';

/**
 * The journal events of one logical run (DESIGN "Journal events"). The journal is the only
 * truth: everything resume (issue 7) and repair (issue 8) need is carried here, so a crash
 * anywhere can be answered from these records plus git objects alone.
 *
 *   run-started
 *     └─ per attempt: attempt-started → [pre-run-done] → [job-submitted → job-ended] →
 *        command-settled → [job-submitted → job-ended] → gates-done →
 *        [post-run-done] → integrated → [gates-done (phase integrate)] → checkpoint →
 *        branch-updated → attempt-closed            (any step may jump to attempt-closed)
 *   after a failed attempt: repair-decided [→ provider-wait, class provider]
 *   [landing-started → landed]
 *   run-complete | run-failed   (terminal, exactly one)
 *
 * (job-submitted / job-ended: a command or gate run as a Slurm job.) A resumed coordinator
 * writes [jobs-cancelled] before coordinator-crashed when the crashed run left Slurm jobs.
 *
 * After a coordinator crash, `runplan stop` instead appends: [jobs-cancelled] → [usage] → leftovers-ended →
 * attempt-closed (each open attempt) → run-failed (interrupted, stopped_after_crash).
 */
export * from './attempt-events.js';
export * from './job-events.js';
export * from './loop-events.js';
export * from './failure-data.js';
export * from './phase.js';
export * from './run-events.js';
export * from './thread-totals.js';
export * from './usage.js';

/** Every event the coordinator writes, by type. */
export interface EventMap {
  'run-started': RunStartedData;
  'coordinator-crashed': CoordinatorCrashedData;
  'leftovers-ended': LeftoversEndedData;
  'journal-failed': JournalFailedData;
  'plan-amended': PlanAmendedData;
  'checkpoint-adopted': CheckpointAdoptedData;
  'repair-decided': RepairDecidedData;
  'provider-wait': ProviderWaitData;
  'round-done': RoundDoneData;
  'round-restored': RoundRestoredData;
  'ref-failed': RefFailedData;
  usage: UsageData;
  'operator-retry': OperatorRetryData;
  'attempt-renumbered': AttemptRenumberedData;
  'attempt-started': AttemptStartedData;
  'worktrees-removed': WorktreesRemovedData;
  'pre-run-done': HookDoneData;
  'job-submitted': JobSubmittedData;
  'job-ended': JobEndedData;
  'jobs-cancelled': JobsCancelledData;
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
