// The closed vocabulary of failures: every reason runplan writes in a failure or a receipt,
// and the one table that gives each its class. A new reason that is not in REASON_CLASS does
// not compile; one not in the README fails test/reasons.test.ts.

/** Why an attempt (or the run) failed; decides whether and how it may be tried again. */
export type FailureClass =
  | 'task'
  | 'gate'
  | 'environment'
  | 'provider'
  | 'timeout'
  | 'teardown'
  | 'integration'
  | 'stagnation'
  | 'needs_human'
  | 'budget'
  | 'interrupted'
  | 'abandoned'
  | 'engine'
  | 'invariant';

export const FAILURE_CLASSES: readonly FailureClass[] = [
  'task',
  'gate',
  'environment',
  'provider',
  'timeout',
  'teardown',
  'integration',
  'stagnation',
  'needs_human',
  'budget',
  'interrupted',
  'abandoned',
  'engine',
  'invariant',
];

/** Setting up the attempt dir, its worktree and its datadir. */
export type SetupReason = 'workdir_failed' | 'worktree_failed' | 'datadir_failed';

/** The hook tiers around the command. */
export type HookReason = 'pre_run_failed' | 'post_run_failed';

/** How the task's command settled, as classifyCommand reads it (also a gate's: spawn_failed, timed_out, stalled). */
export type SettlementReason =
  | 'spawn_failed'
  | 'blocked'
  | 'provider_limited'
  | 'timed_out'
  | 'stalled'
  | 'agent_error'
  | 'agent_auth_failed'
  | 'agent_config_invalid'
  | 'turn_limit'
  | 'no_result'
  | 'signaled'
  | 'exited';

/** The command step besides its settlement. */
export type CommandReason = SettlementReason | 'provider_reset_too_far' | 'template_refused' | 'transport_error' | 'teardown_failed';

/** An improve-verify loop (`until`). */
export type LoopReason = 'no_change' | 'tree_cycle' | 'repeated_verify' | 'rounds_exhausted';

export type GateReason = 'gate_failed';

/** Committing what the task left, and checking it. */
export type CommitReason = 'commit_failed' | 'zero_diff' | 'history_rewritten';

/** Putting the result on the integration head, and landing the run. */
export type IntegrationReason = 'integration_conflict' | 'rebase_failed' | 'branch_moved' | 'land_moved' | 'land_checked_out';

export type BudgetReason = 'max_tokens' | 'max_cost_usd';

/**
 * The engine ended a job for a reason of its own (src/executor/slurm/outcome.ts): cancelled
 * by someone else, out of memory, its node failed, preempted; or srun's submission was
 * refused; or a job of ours was still queued after scancel; or Slurm could not be asked
 * whether the attempt's jobs are gone (squeue failed: the controller unreachable).
 */
export type EngineReason =
  | 'slurm_cancelled'
  | 'slurm_out_of_memory'
  | 'slurm_node_failed'
  | 'slurm_preempted'
  | 'slurm_submit_failed'
  | 'slurm_cancel_failed'
  | 'slurm_unreachable';

/** A write the file system refused (host/disk.ts). */
export type DiskReason = 'disk_full' | 'io_error';

/** A write of an attempt's evidence the file system refused for permission or a read-only mount (attempt/failure.ts). */
export type StateReason = 'state_unwritable';

/** The run itself: its interruption, the coordinator's own failures, runs closed unrun. */
export type RunReason =
  | 'interrupted'
  | 'internal_error'
  | 'journal_failed'
  | 'coordinator_crashed'
  | 'crash_cap_exhausted'
  | 'unschedulable'
  | 'stopped_after_crash'
  | 'abandoned'
  | 'never_started';

/** Every reason a failure carries; each has exactly one class (REASON_CLASS). */
export type FailureReason =
  | SetupReason
  | HookReason
  | CommandReason
  | LoopReason
  | GateReason
  | CommitReason
  | IntegrationReason
  | BudgetReason
  | DiskReason
  | StateReason
  | EngineReason
  | RunReason;

/**
 * Repair's stop on a failure whose fingerprint repeats an earlier attempt's: the run's
 * receipt names `repeated_failure` and keeps the class of the failure that repeated (a gate
 * failure twice is class gate), so it is the one reason with no class of its own.
 */
export type RepairStopReason = 'repeated_failure';

/**
 * Why repair stopped a task (repair-decided `stopReason`): `repeated_failure`, the same
 * fingerprint as an earlier attempt; `cap_exhausted`, the class's cap is used up;
 * `not_retryable`, the class (or the reason) is never retried.
 */
export type RepairStop = RepairStopReason | 'cap_exhausted' | 'not_retryable';

/** The one table: reason → class. Deciding a failure's class means looking it up here. */
export const REASON_CLASS = {
  workdir_failed: 'environment',
  worktree_failed: 'environment',
  datadir_failed: 'environment',
  pre_run_failed: 'environment',
  post_run_failed: 'gate',
  template_refused: 'environment',
  spawn_failed: 'environment',
  blocked: 'needs_human',
  provider_limited: 'provider',
  provider_reset_too_far: 'provider',
  timed_out: 'timeout',
  stalled: 'timeout',
  agent_error: 'task',
  agent_auth_failed: 'environment',
  agent_config_invalid: 'environment',
  turn_limit: 'task',
  no_result: 'task',
  signaled: 'task',
  exited: 'task',
  transport_error: 'task',
  teardown_failed: 'teardown',
  no_change: 'stagnation',
  tree_cycle: 'stagnation',
  repeated_verify: 'stagnation',
  rounds_exhausted: 'task',
  gate_failed: 'gate',
  commit_failed: 'task',
  zero_diff: 'task',
  history_rewritten: 'task',
  integration_conflict: 'integration',
  rebase_failed: 'environment',
  branch_moved: 'integration',
  land_moved: 'integration',
  land_checked_out: 'integration',
  max_tokens: 'budget',
  max_cost_usd: 'budget',
  disk_full: 'environment',
  io_error: 'environment',
  state_unwritable: 'environment',
  slurm_cancelled: 'environment',
  slurm_out_of_memory: 'environment',
  slurm_node_failed: 'environment',
  slurm_preempted: 'environment',
  slurm_submit_failed: 'environment',
  slurm_cancel_failed: 'teardown',
  slurm_unreachable: 'teardown',
  interrupted: 'interrupted',
  internal_error: 'engine',
  journal_failed: 'environment',
  coordinator_crashed: 'engine',
  crash_cap_exhausted: 'engine',
  unschedulable: 'engine',
  stopped_after_crash: 'interrupted',
  abandoned: 'abandoned',
  never_started: 'abandoned',
} as const satisfies Record<FailureReason, FailureClass>;

/** Every failure reason, in table order. */
export const FAILURE_REASONS = Object.keys(REASON_CLASS) as FailureReason[];

/** The class the table gives a reason. */
export type ClassOf<R extends FailureReason> = (typeof REASON_CLASS)[R];

/**
 * A reason together with its class, for each reason of R: a literal `{class, reason}` whose
 * class is not the table's does not compile.
 */
export type ClassifiedAs<R extends FailureReason> = { [K in R]: { class: ClassOf<K>; reason: K } }[R];

/** Any failure reason with its class; or repair's repeated_failure with the class it repeats. */
export type Classified = ClassifiedAs<FailureReason> | { class: FailureClass; reason: RepairStopReason };

// A reason with the class the table gives it.
export function classified<R extends FailureReason>(reason: R): ClassifiedAs<R> {
  return { class: REASON_CLASS[reason], reason } as ClassifiedAs<R>;
}

// Whether a string (read back from a journal) is one of the failure reasons.
export function isFailureReason(reason: string): reason is FailureReason {
  return Object.hasOwn(REASON_CLASS, reason);
}

/** Reasons an attempt (or run) ends with its Slurm jobs not verified gone: the next run ends them first (resume/slurm-jobs.ts). */
export function leavesJobsUnverified(reason: unknown): boolean {
  return reason === 'slurm_unreachable' || reason === 'slurm_cancel_failed';
}
