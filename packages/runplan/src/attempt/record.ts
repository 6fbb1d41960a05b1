import type { TaskSpec } from '../plan/types.js';
import type { RunContext } from '../coordinator/context.js';
import { ZERO_USAGE, type Phase, type UsageTotals } from '../events/types.js';
import type { GitRunContext } from '../host/git.js';
import type { AttemptOwnership } from './ownership.js';

/** The only mutable state of one attempt while its steps run. */
export class AttemptRecord {
  /** The step running now: an error no step turned into a failure is charged to it. */
  phase: Phase = 'setup';
  /** Evidence files written so far, in order (attempt-closed lists them). */
  readonly evidence: string[] = [];
  /** Processes of the attempt that survived their teardown (the checkpoint still stands). */
  readonly survivors: number[] = [];
  /** What the agent reported, summed over the attempt's commands (loop rounds). */
  usage: UsageTotals = ZERO_USAGE;
  costUsd = 0;
  /** The git worktree once added: removed after a success, kept as evidence after a failure. */
  worktree: string | undefined;
}

/** One attempt as every step sees it: what it started with (read-only) and its record. */
export interface Attempt {
  readonly ctx: RunContext;
  readonly task: TaskSpec;
  readonly attempt: number;
  /** settle ownerTag of every process of the attempt (journaled in attempt-started). */
  readonly ownerTag: string;
  /** How settle owns the attempt's processes (mode and cgroup parent, journaled in attempt-started). */
  readonly ownership: AttemptOwnership;
  readonly evidenceDir: string;
  /** How the attempt's git processes run: its ownerTag, the run's signal, the commit identity. */
  readonly git: GitRunContext;
  readonly rec: AttemptRecord;
}

// A new attempt with an empty record.
export function newAttempt(
  ctx: RunContext,
  task: TaskSpec,
  n: { attempt: number; ownerTag: string; evidenceDir: string; ownership: AttemptOwnership },
): Attempt {
  return {
    ctx,
    task,
    attempt: n.attempt,
    ownerTag: n.ownerTag,
    ownership: n.ownership,
    evidenceDir: n.evidenceDir,
    git: { ownerTag: n.ownerTag, signal: ctx.signal, env: ctx.gitIdentity },
    rec: new AttemptRecord(),
  };
}
