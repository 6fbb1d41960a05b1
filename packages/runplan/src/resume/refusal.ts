import type { JournalErrorReason } from '@runplan/journal';
import type { DiskReason } from '../events/reasons.js';

/**
 * Every reason `runplan run` refuses for (exit 3, nothing written): its own, the journal's
 * and the lock's (passed on as they say it), and a full disk. A closed union, so a new
 * refusal is named here, in the README's list, and nowhere as a bare string.
 */
export type RefusalReason =
  | 'attempt_collision'
  | 'background_launch'
  | 'base_missing'
  | 'budget_spent'
  | 'checkpoint_invalid'
  | 'commit_missing'
  | 'contract_changed'
  | 'dependency_mismatch'
  | 'executor_unavailable'
  | 'executor_workdir_not_shared'
  | 'incomplete_run'
  | 'journal_corrupt'
  | 'land_checked_out'
  | 'land_moved'
  | 'no_such_run'
  | 'not_a_repository'
  | 'not_descendant'
  | 'repair_stopped'
  | 'run_unreadable'
  | 'several_incomplete_runs'
  | 'slurm_cancel_failed'
  | 'state_unwritable'
  | 'task_removed'
  | 'unknown_task'
  | JournalErrorReason
  | DiskReason;

/** Why a run cannot be resumed, continued or started: `run` exits 3 with it, having written nothing. */
export interface Refusal {
  reason: RefusalReason;
  message: string;
  hint?: string;
}
