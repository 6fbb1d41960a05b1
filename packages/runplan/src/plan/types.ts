// The validated, defaults-applied shape of a plan (the keys: PLAN.md). Everything
// downstream (scheduler, digests, secrets, repair) reads these types, never the raw TOML.

import type { ExecutorSpec } from '../executor/spec.js';

/** How a task's stdout is interpreted (tokens, cost, session, failure). */
export type AgentFormat = 'text' | 'claude-stream-json' | 'codex-json' | 'gemini-json' | 'gemini-stream-json' | 'cursor-stream-json';

export const AGENT_FORMATS: readonly AgentFormat[] = [
  'text',
  'claude-stream-json',
  'codex-json',
  'gemini-json',
  'gemini-stream-json',
  'cursor-stream-json',
];

/** Repair caps per failure class. A cap counts attempts: `task = 3` is at most 3 attempts. */
export interface RepairCaps {
  task: number;
  gate: number;
  timeout: number;
  provider: number;
  integration: number;
  /** First provider backoff when the agent reports no reset time; doubles per provider failure. */
  backoffMs: number;
  /** Exit codes of the command that mean "the provider refused" (rate limit, overload). */
  providerExitCodes: number[];
  /**
   * `provider_max_wait`: the longest one provider reset is waited for; a reset further away
   * stops the run (`provider_reset_too_far`) rather than parking it for days in silence.
   * Undefined: PROVIDER_MAX_WAIT_MS (set only when given, so plan digests stay as they were).
   */
  providerMaxWaitMs?: number;
}

/** `[repair] provider_max_wait` when the plan gives none: 4h. */
export const PROVIDER_MAX_WAIT_MS = 4 * 3600_000;

export interface TaskSpec {
  id: string;
  needs: string[];
  /** Prompt text: the `prompt` key, or the content of `prompt_file`. Absent = empty stdin. */
  prompt?: string;
  /** Absolute path of `prompt_file` when the prompt came from a file. */
  promptFile?: string;
  /** argv template (tier pre_run), from the task or `[defaults]`. */
  command: string[];
  format: AgentFormat;
  model?: string;
  gates: string[][];
  deadlineMs: number;
  /** No output for this long = stalled. Undefined = off. */
  stallMs?: number;
  graceMs: number;
  /**
   * How long an agent may stay alive, writing nothing, after its terminal line (claude
   * `result`, codex `turn.completed` / `turn.failed`) before it is torn down and the attempt
   * settles with that line's outcome (agents that hang after their final line). Undefined:
   * PLAN_DEFAULTS.resultGraceMs.
   */
  resultGraceMs?: number;
  gateDeadlineMs: number;
  expect: 'commit' | 'none';
  /** Variables from the plan (`[defaults] env` merged under the task's `env`). For the command only. */
  env: Record<string, string>;
  /** Absolute path of `env_file`. */
  envFile?: string;
  /** `env_file` exactly as the plan spells it (relative to the plan): what the contract digest hashes. */
  envFileRef?: string;
  /** Loaded from env_file for the command's environment; secret, never written anywhere. */
  envFileValues: Record<string, string>;
  /** Improve-verify loop: rounds of the command until this argv exits 0. */
  until?: string[];
  rounds: number;
  /**
   * Consecutive rounds failing verify with the same fingerprint (on changing trees) that make
   * a loop `repeated_verify`: a coarse verify prints the same line while the work advances.
   */
  stagnationRounds: number;
  /** An exit code of the command meaning "I am blocked" (class needs_human). */
  blockedExit?: number;
  /** The plan's `[repair]` with the task's `repair = {…}` applied over it. */
  repair: RepairCaps;
  /**
   * Where the command runs: the task's `executor` over the plan's `[executor]`. Absent:
   * locally (set only for slurm, so a plan without the keys keeps its digest).
   */
  executor?: ExecutorSpec;
  /** `gates_executor`: where gates and `until` run when not where the command ran; absent: there. */
  gatesExecutor?: ExecutorSpec;
}

export interface Plan {
  /** Absolute path of the plan file. */
  file: string;
  /** Directory of the plan file; `prompt_file`/`env_file` are relative to it. */
  dir: string;
  slug: string;
  /** Ref the first logical run starts from (default `HEAD`). */
  base: string;
  jobs: number;
  retain?: number;
  /**
   * `keep_going = true` (as `make -k`): a task that stops for good stops only what is
   * downstream of it. Outside every contract.
   */
  keepGoing?: boolean;
  land?: string;
  /** Attempt directory template (tier workdir). */
  workdir?: string;
  /**
   * `min_free` in bytes: after a disk_full, no dispatch while the file system that failed
   * has less free (undefined: PLAN_DEFAULTS.minFree).
   */
  minFree?: number;
  /**
   * `ownership`: how settle owns every process of an attempt (`auto`: a cgroup v2 cgroup per
   * process when one can be made, else process group + tag; `cgroup`; `group+tag`). Undefined: auto.
   */
  ownership?: 'auto' | 'cgroup' | 'group+tag';
  /** `cgroup_parent`, absolute: the cgroup v2 directory settle makes the attempts' cgroups in (undefined: the coordinator's own cgroup's). */
  cgroupParent?: string;
  /** Names of variables whose values are masked everywhere runplan writes. */
  secretEnv: string[];
  hooks: { preRun?: string[]; postRun?: string[]; timeoutMs: number };
  budget: { maxTokens?: number; maxCostUsd?: number };
  repair: RepairCaps;
  /** In file order. */
  tasks: TaskSpec[];
  /** The parsed document as written (never holds env_file values); undefined in a plan `run` took from the plan cache (plan/cache.ts). */
  raw: unknown;
}

/** One thing wrong with a plan, at its key path (`tasks[2].needs[0]`, `hooks.pre_run[1]`). */
export interface PlanProblem {
  path: string;
  /** snake_case slug, e.g. `unknown_key`, `cycle`, `bad_duration`. */
  reason: string;
  message: string;
}

export const DEFAULT_CAPS: RepairCaps = Object.freeze({
  task: 3,
  gate: 3,
  timeout: 2,
  provider: 4,
  integration: 2,
  backoffMs: 30_000,
  providerExitCodes: [],
}) as RepairCaps;

/** Defaults of DESIGN.md and issue 6 (durations in ms). */
export const PLAN_DEFAULTS = Object.freeze({
  base: 'HEAD',
  jobs: 1,
  deadlineMs: 60 * 60_000,
  graceMs: 10_000,
  resultGraceMs: 30_000,
  gateDeadlineMs: 30 * 60_000,
  hookTimeoutMs: 10 * 60_000,
  rounds: 25,
  stagnationRounds: 3,
  minFree: 1024 ** 3,
  expect: 'commit' as const,
  format: 'text' as AgentFormat,
});
