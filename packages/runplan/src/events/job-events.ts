// The data of the events an attempt journals about its Slurm jobs (see events/types.ts).

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
