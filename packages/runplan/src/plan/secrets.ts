import { canonicalJson, planSettings, sortKeys } from './digest.js';
import type { Plan } from './types.js';

export const MASK = '***';

/**
 * Every value runplan must never write: all env_file values, and the values of variables
 * named in `secret_env`, from the plan's env tables and from the environment runplan runs
 * in. Empty values are left out (masking "" means nothing). Any other value counts, even a
 * one-character one: a secret is masked however short, at the price of masking that text
 * wherever it appears, so keep secret values long.
 */
export function secretValues(plan: Pick<Plan, 'tasks' | 'secretEnv'>, env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  for (const task of plan.tasks) {
    for (const value of Object.values(task.envFileValues)) values.add(value);
    for (const name of plan.secretEnv) {
      const value = task.env[name];
      if (value !== undefined) values.add(value);
    }
  }
  for (const name of plan.secretEnv) {
    const value = env[name];
    if (value !== undefined) values.add(value);
  }
  values.delete('');
  return [...values].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Replaces every occurrence of every secret with ***, longest first, in one pass (so a
// secret that contains another is masked whole and a mask is never masked again).
export function maskSecrets(text: string, secrets: readonly string[]): string {
  const nonEmpty = secrets.filter((s) => s !== '');
  if (nonEmpty.length === 0 || text === '') return text;
  const pattern = new RegExp(
    [...nonEmpty]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'g',
  );
  return text.replace(pattern, MASK);
}

// A masker bound to one plan's secrets, for code that masks many strings.
export function secretMasker(secrets: readonly string[]): (text: string) => string {
  const nonEmpty = [...new Set(secrets.filter((s) => s !== ''))].sort((a, b) => b.length - a.length);
  if (nonEmpty.length === 0) return (text) => text;
  const pattern = new RegExp(nonEmpty.map(escapeRegExp).join('|'), 'g');
  return (text) => text.replace(pattern, MASK);
}

// Masks every string (and object key) inside a JSON-able value.
export function maskDeep<T>(value: T, secrets: readonly string[]): T {
  const mask = secretMasker(secrets);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return mask(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v)) out[mask(k)] = walk(inner);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * The plan as written to `<run>/plan.json`: validated keys with defaults applied, paths
 * as resolved, env_file values never present (only the file's path), values of
 * `secret_env` variables and any secret text elsewhere masked as ***. Parts that need no
 * change (an argv, an env) may be the plan's own objects: the copy is for reading only.
 */
export function planCopy(plan: Plan, env: NodeJS.ProcessEnv = process.env, secrets: readonly string[] = secretValues(plan, env)): unknown {
  const copy = {
    file: plan.file,
    ...planSettings(plan),
    tasks: plan.tasks.map(({ envFileValues, ...task }) => {
      // One copy of the task (the rest of it), its env masked (with no secret_env names there is nothing to mask in it).
      const copied: Record<string, unknown> = task;
      if (plan.secretEnv.length > 0)
        copied.env = Object.fromEntries(Object.entries(task.env).map(([k, v]) => [k, plan.secretEnv.includes(k) ? MASK : v]));
      copied.envFileKeys = Object.keys(envFileValues).sort();
      return copied;
    }),
  };
  // With no secret values there is nothing to mask: the key-sorted copy (undefined keys
  // dropped) stringifies to the same text as its JSON round-trip would — V8 orders
  // integer-like keys first either way — and skips a stringify + parse of the whole plan
  // (~100–300 ms at 10k tasks). With secrets, the round-trip makes the copy plain JSON
  // for maskDeep to walk.
  if (secrets.length === 0) return sortKeys(copy);
  return maskDeep(JSON.parse(canonicalJson(copy)) as unknown, secrets);
}

/** plan.json texts already made for a plan object (made with no secret to mask): see planCopyText. */
const knownCopies = new WeakMap<Plan, string>();

/**
 * The text of `<run>/plan.json`: planCopy as indented JSON, every secret masked. With no
 * secret to mask it depends on the plan alone, so it is kept for the plan object, and the
 * plan cache keeps it too (rememberPlanCopyText); with secrets it is made every time.
 */
// `secrets`: the plan's secretValues under `env`, when the caller has them already.
export function planCopyText(
  plan: Plan,
  env: NodeJS.ProcessEnv = process.env,
  secrets: readonly string[] = secretValues(plan, env),
): string {
  const known = secrets.length === 0 ? knownCopies.get(plan) : undefined;
  if (known !== undefined) return known;
  const text = `${maskSecrets(JSON.stringify(planCopy(plan, env, secrets), null, 2), secrets)}\n`;
  if (secrets.length === 0) knownCopies.set(plan, text);
  return text;
}

// The plan.json text the plan cache holds for `plan` (made when there was no secret to mask).
export function rememberPlanCopyText(plan: Plan, text: string): void {
  knownCopies.set(plan, text);
}
