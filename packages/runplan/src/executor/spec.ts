// Where an attempt's command (and its gates) run: the plan's `[executor]`, a task's
// `executor = {…}` over it, and `gates_executor` (PLAN.md "Executors").

/** Today's path: settle on this host. */
export interface LocalExecutorSpec {
  kind: 'local';
}

/** A Slurm cluster: every command a job submitted with `srun` from this host. */
export interface SlurmExecutorSpec {
  kind: 'slurm';
  /** `--partition`; absent: the cluster's default partition. */
  partition?: string;
  /** `--account`; absent: the user's default account. */
  account?: string;
  /** More srun options, as argv (never a shell string); options runplan sets itself are refused. */
  extraArgs: string[];
}

export type ExecutorSpec = LocalExecutorSpec | SlurmExecutorSpec;

export type ExecutorKind = ExecutorSpec['kind'];

export const EXECUTOR_KINDS: readonly ExecutorKind[] = ['local', 'slurm'];

export const LOCAL: LocalExecutorSpec = Object.freeze({ kind: 'local' });

// Where a task's command runs (a TaskSpec without `executor` runs locally).
export function commandExecutor(task: { executor?: ExecutorSpec }): ExecutorSpec {
  return task.executor ?? LOCAL;
}

// Where a task's gates (and its loop's verify) run: `gates_executor`, else where the command ran.
export function gatesExecutor(task: { executor?: ExecutorSpec; gatesExecutor?: ExecutorSpec }): ExecutorSpec {
  return task.gatesExecutor ?? commandExecutor(task);
}

// Whether any of the plan's commands or gates run on Slurm (then its tools must be on PATH).
export function planUsesSlurm(plan: { tasks: readonly { executor?: ExecutorSpec; gatesExecutor?: ExecutorSpec }[] }): boolean {
  return plan.tasks.some((t) => commandExecutor(t).kind === 'slurm' || gatesExecutor(t).kind === 'slurm');
}
