import { createHash, hash as oneShotHash } from 'node:crypto';
import type { Plan, TaskSpec } from './types.js';

// JSON with object keys sorted at every level (undefined dropped, as JSON.stringify does):
// the same value always gives the same bytes, so the same digest.
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

// The value with object keys sorted at every level and undefined dropped (arrays: null).
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeys(v)));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

// sha256 of the UTF-8 bytes of `text`, as hex. The one-shot crypto.hash (Node >= 20.12)
// skips building a Hash object per call: digests are taken once per task and per checkpoint.
export function sha256Hex(text: string): string {
  return typeof oneShotHash === 'function' ? oneShotHash('sha256', text, 'hex') : createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * What defines a task's result (DESIGN.md "Plans"): command, prompt text, gates, until,
 * env names and values from the plan, env_file by its path as written (never its values),
 * expect, model and the ids of its needs. Deadlines, repair caps, rounds, format and the
 * rest may change between a crash and its resume without invalidating a checkpoint.
 */
export function taskContract(task: TaskSpec): Record<string, unknown> {
  return {
    command: task.command,
    prompt: task.prompt ?? null,
    gates: task.gates,
    until: task.until ?? null,
    env: task.env,
    envFile: task.envFileRef ?? null,
    expect: task.expect,
    model: task.model ?? null,
    needs: [...task.needs].sort(),
  };
}

// sha256 of one task's contract.
export function contractDigestOf(task: TaskSpec): string {
  return sha256Hex(canonicalJson(taskContract(task)));
}

// Every task's contract digest, computed once per plan (callers over many tasks use this,
// not taskContractDigest in a loop, which searches the task list on every call).
export function taskContractDigests(plan: Pick<Plan, 'tasks'>): Map<string, string> {
  return new Map(plan.tasks.map((t) => [t.id, contractDigestOf(t)]));
}

/**
 * sha256 of a plan's task list as run-started and plan-amended journal it: the canonical
 * JSON of `[{id, needs, contractDigest}, …]` in plan order. `contracts` are the plan's
 * task contract digests (taskContractDigests).
 */
export function taskListDigest(plan: Pick<Plan, 'tasks'>, contracts: Map<string, string> = taskContractDigests(plan)): string {
  return sha256Hex(
    canonicalJson(plan.tasks.map((t) => ({ id: t.id, needs: t.needs, contractDigest: contracts.get(t.id) ?? contractDigestOf(t) }))),
  );
}

// sha256 of the task's contract; throws for an id the plan does not have (a caller bug).
export function taskContractDigest(plan: Pick<Plan, 'tasks'>, taskId: string): string {
  const task = plan.tasks.find((t) => t.id === taskId);
  if (!task) throw new Error(`taskContractDigest: no task ${JSON.stringify(taskId)} in the plan`);
  return contractDigestOf(task);
}

// The contract keys that differ between two versions of a task (for a refusal message).
export function contractChanges(before: TaskSpec, after: TaskSpec): string[] {
  const a = taskContract(before);
  const b = taskContract(after);
  return Object.keys(a).filter((key) => canonicalJson(a[key]) !== canonicalJson(b[key]));
}

/**
 * sha256 of the whole validated plan: every key with defaults applied, prompt text
 * included, env_file by the path as written. Never env_file values, and never where the
 * plan file sits (absolute paths), so a moved checkout keeps its digest.
 */
export function planDigest(plan: Plan): string {
  return sha256Hex(canonicalJson(digestablePlan(plan)));
}

// The plan as planDigest sees it.
export function digestablePlan(plan: Plan): Record<string, unknown> {
  return {
    ...planSettings(plan),
    tasks: plan.tasks.map(({ envFileValues: _values, envFile: _path, promptFile: _prompt, ...rest }) => rest),
  };
}

// The plan-level keys (everything but the file and the tasks), as digests and the plan copy see them.
export function planSettings(plan: Plan): Record<string, unknown> {
  return {
    slug: plan.slug,
    base: plan.base,
    jobs: plan.jobs,
    retain: plan.retain,
    land: plan.land,
    workdir: plan.workdir,
    minFree: plan.minFree,
    ownership: plan.ownership,
    cgroupParent: plan.cgroupParent,
    secretEnv: plan.secretEnv,
    hooks: plan.hooks,
    budget: plan.budget,
    repair: plan.repair,
  };
}
