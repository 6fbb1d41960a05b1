import type { Captured, Consumer, Execution, SettleSpec } from '@runplan/settle';
import type { EngineReason } from '../events/reasons.js';

/**
 * The executor contract (README "Executors"): how one command of an attempt is submitted,
 * observed, torn down and listed by its owner, and how its outcome comes back.
 *
 * - submit + observe + tear down: `stream` runs the command to its end — the prompt on its
 *   stdin, its stdout to the format interpreter (`consume`) as it is written, its stderr to
 *   the evidence file — and returns only once nothing of it runs any more: after its own exit,
 *   or after the deadline, stall, finish or interrupt tore it down (verified).
 * - outcome: settle's Execution (the same fields for every executor, so classification is
 *   one), plus `engine` when the engine itself ended the work for a reason of its own
 *   (a Slurm cancel by someone else, out of memory, a node failure, a preemption).
 * - output and usage: what the interpreter read (tokens, cost, session) is the consumer's
 *   state; `jobs` are what the engine journals about where it ran.
 * - listed by owner: `listByOwner(prefix)` finds work whose ownerTag starts with the prefix
 *   (a run's prefix covers every attempt of it, also one whose attempt-started was torn);
 *   `teardownByOwner` ends it, verified. Resume and `runplan stop` use them after a crash.
 */
export interface Executor {
  readonly kind: 'local' | 'slurm';
  stream<S>(spec: CommandSpec, initialState: S, consume: Consumer<S>, hooks?: ExecutorHooks): Promise<CommandEnd<S>>;
  capture(spec: GateSpec, hooks?: ExecutorHooks): Promise<Captured>;
  listByOwner(prefix: string): Promise<OwnedWork[]>;
  teardownByOwner(prefix: string, graceMs: number): Promise<OwnedTeardown>;
}

/** One command: settle's spec; `ownerTag` is required (every executor names its work by it). */
export type CommandSpec = SettleSpec & { ownerTag: string };

/** One gate (or `until` verify), captured. */
export type GateSpec = CommandSpec & { maxBuffer?: number };

/** What an executor reports while it runs (journaled by the attempt). */
export interface ExecutorHooks {
  /** The engine accepted the work: its id there (a Slurm job id), once known. */
  onSubmitted?: (job: SubmittedJob) => Promise<void>;
  /** The engine's record of the work once it ended (state, exit code, node). */
  onEnded?: (job: EndedJob) => Promise<void>;
}

export interface SubmittedJob {
  jobId: string;
  /** The job's name: the attempt's ownerTag. */
  name: string;
}

export interface EndedJob {
  jobId: string;
  /** The engine's own word (`COMPLETED`, `TIMEOUT`, `CANCELLED`, …); `UNKNOWN` when it kept no record. */
  state: string;
  exitCode: number | null;
  nodes: string;
}

/** How a command ended, as every executor reports it. */
export interface CommandEnd<S> {
  execution: Execution;
  state: S | undefined;
  /** The engine ended the work for a reason of its own; it outranks the execution's reason. */
  engine?: { reason: EngineReason; message: string };
}

/** Something still running (or queued) under an ownerTag. */
export interface OwnedWork {
  /** A pid (local) or a job id (Slurm). */
  id: string;
  ownerTag: string;
  /** `running`, or the engine's state (`PENDING`, `RUNNING`, `COMPLETING`). */
  state: string;
}

/** What tearing an owner's work down did: what was ended and what is still there after it. */
export interface OwnedTeardown {
  ended: string[];
  survivors: string[];
}
