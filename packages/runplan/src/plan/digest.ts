import { createHash, hash as oneShotHash } from 'node:crypto';
import type { Plan, TaskSpec } from './types.js';

// JSON with object keys sorted at every level (undefined dropped, as JSON.stringify does):
// the same value always gives the same bytes, so the same digest.
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

// The value with object keys sorted at every level and undefined dropped (arrays: null).
// A part that is that already (an argv of strings, an empty env, an object built with its
// keys in order) is returned as it is, not copied: JSON.stringify gives the same text, and a
// 10k-task plan's digests and copy make far less garbage.
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const sorted = v === undefined ? null : sortKeys(v);
      if (out === undefined && sorted !== v) out = value.slice(0, i);
      out?.push(sorted);
    }
    return out ?? value;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    const proto = Object.getPrototypeOf(record) as unknown;
    // Only a plain object is returned as it is (JSON.stringify would call a class's toJSON).
    let same = (proto === Object.prototype || proto === null) && inOrder(keys);
    if (!same) keys.sort();
    const values = keys.map((key) => {
      const v = record[key];
      const sorted = v === undefined ? undefined : sortKeys(v);
      if (sorted !== v || v === undefined) same = false;
      return sorted;
    });
    if (same) return value;
    const out: Record<string, unknown> = {};
    keys.forEach((key, i) => {
      if (values[i] !== undefined) out[key] = values[i];
    });
    return out;
  }
  return value;
}

// Whether keys are in the order sort() puts them (an object made from them enumerates the same).
function inOrder(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! >= keys[i]!) return false;
  return true;
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
  // Keys in sorted order: canonicalJson then need not copy it (the text is the same either way).
  return {
    command: task.command,
    env: task.env,
    envFile: task.envFileRef ?? null,
    expect: task.expect,
    gates: task.gates,
    model: task.model ?? null,
    needs: [...task.needs].sort(),
    prompt: task.prompt ?? null,
    until: task.until ?? null,
  };
}

// sha256 of one task's contract.
export function contractDigestOf(task: TaskSpec): string {
  return sha256Hex(canonicalJson(taskContract(task)));
}

// Every task's contract digest, computed once per plan (callers over many tasks use this,
// not taskContractDigest in a loop, which searches the task list on every call).
export function taskContractDigests(plan: Pick<Plan, 'tasks'>): Map<string, string> {
  const known = knownDigests.get(plan)?.contracts;
  if (known !== undefined) return new Map(known);
  return new Map(plan.tasks.map((t) => [t.id, contractDigestOf(t)]));
}

/**
 * Digests already known for one plan object: the plan cache (plan/cache.ts) hands them over
 * with the plan it read, taken by this code from the same plan before it was cached, so
 * planDigest and taskContractDigests of that object need not be worked out again. Only a
 * plan nothing changes after it is loaded is given them.
 */
const knownDigests = new WeakMap<object, { plan: string; contracts: ReadonlyMap<string, string> }>();

export function rememberDigests(plan: Plan, digests: { plan: string; contracts: ReadonlyMap<string, string> }): void {
  knownDigests.set(plan, digests);
}

/**
 * sha256 of a plan's task list as run-started and plan-amended journal it: the canonical
 * JSON of `[{id, needs, contractDigest}, …]` in plan order. `contracts` are the plan's
 * task contract digests (taskContractDigests).
 */
export function taskListDigest(plan: Pick<Plan, 'tasks'>, contracts: Map<string, string> = taskContractDigests(plan)): string {
  return sha256Hex(
    // Keys in sorted order, so canonicalJson takes each object as it is (the text is the same).
    canonicalJson(plan.tasks.map((t) => ({ contractDigest: contracts.get(t.id) ?? contractDigestOf(t), id: t.id, needs: t.needs }))),
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
  return knownDigests.get(plan)?.plan ?? sha256Hex(canonicalJson(digestablePlan(plan)));
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
