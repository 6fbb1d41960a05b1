import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { err, ok } from '@runplan/common';
import type { Result } from '@runplan/common';
import { isIdentifier, parsePathTemplate } from '@runplan/workdir';
import { parse as parseToml } from 'smol-toml';
import { checkBudgetVars } from './budget-vars.js';
import { readExecutor } from '../executor/plan-keys.js';
import { isEnvName } from './env-file.js';
import { duplicateJsonKey } from './json-keys.js';
import { dependencyOrder } from './graph.js';
import { isTable, keyPath, PlanReader } from './reader.js';
import { branchNameProblem, refComponentProblem, revisionProblem } from './refs.js';
import type { PlanFiles } from './files.js';
import { DEFAULT_KEYS, idLengthProblem, readPlanFiles, readRepair, readTaskKeys, readTasks } from './tasks.js';
import { DEFAULT_CAPS, PLAN_DEFAULTS } from './types.js';
import type { AgentFormat, Plan, PlanProblem } from './types.js';

export { AGENT_FORMATS, PLAN_DEFAULTS } from './types.js';
export type { AgentFormat, Plan, PlanProblem, RepairCaps, TaskSpec } from './types.js';

/** The keys the plan reader accepts at each level (PLAN.md documents every one: test/plan-doc.test.ts). */
export const TOP_KEYS = [
  'slug',
  'base',
  'jobs',
  'retain',
  'land',
  'workdir',
  'min_free',
  'ownership',
  'cgroup_parent',
  'keep_going',
  'secret_env',
  'hooks',
  'defaults',
  'budget',
  'repair',
  'tasks',
  'executor',
];
export const HOOK_KEYS = ['pre_run', 'post_run', 'timeout'];
export const BUDGET_KEYS = ['max_tokens', 'max_cost_usd'];

// Reads, parses and validates a plan file completely: every problem, each at its key path.
export async function loadPlan(file: string): Promise<Result<Plan, PlanProblem[]>> {
  const path = resolve(file);
  const text = await readPlanText(path);
  return text.ok ? validatePlanText(text.value, path) : text;
}

// The text of the plan file at `path`, or why it cannot be read.
export async function readPlanText(path: string): Promise<Result<string, PlanProblem[]>> {
  try {
    return ok(await readFile(path, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return err([
      { path: '', reason: code === 'ENOENT' ? 'missing_file' : 'unreadable', message: `cannot read plan ${path}: ${code ?? String(e)}` },
    ]);
  }
}

// Parses and validates the text of the plan file at `path` (absolute).
export async function validatePlanText(text: string, path: string, seen?: { files?: PlanFiles }): Promise<Result<Plan, PlanProblem[]>> {
  const parsed = parsePlanText(text, path);
  if (!parsed.ok) return err([parsed.error]);
  return validatePlan(parsed.value, path, seen);
}

// TOML, or JSON when the file ends in .json or its text starts with `{`.
export function parsePlanText(text: string, file: string): Result<unknown, PlanProblem> {
  const body = text.replace(/^\uFEFF/, '');
  if (file.endsWith('.json') || body.trimStart().startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (e) {
      return err({ path: '', reason: 'parse_error', message: `${file} is not valid JSON: ${(e as Error).message}` });
    }
    const twice = duplicateJsonKey(body);
    if (twice !== undefined) {
      const { key, line, column } = twice;
      const message = `${file} is not a valid plan at line ${line}, column ${column}: key ${JSON.stringify(key)} is given twice in one object`;
      return err({ path: '', reason: 'parse_error', message });
    }
    return ok(value);
  }
  try {
    return ok(parseToml(body));
  } catch (e) {
    const where =
      e instanceof Error && 'line' in e ? ` at line ${String(e.line)}, column ${String((e as { column?: unknown }).column)}` : '';
    const first = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return err({ path: '', reason: 'parse_error', message: `${file} is not valid TOML${where}: ${first}` });
  }
}

// Validates a parsed plan document; `file` locates prompt_file and env_file. `seen.files`
// is given the files it read (the plan cache keys on their text).
export async function validatePlan(raw: unknown, planFile: string, seen?: { files?: PlanFiles }): Promise<Result<Plan, PlanProblem[]>> {
  const r = new PlanReader();
  const file = resolve(planFile);
  const dir = dirname(file);
  if (!isTable(raw)) {
    r.problem('', 'wrong_type', 'a plan must be a table of keys');
    return err(r.problems);
  }
  r.keys(raw, TOP_KEYS, '');

  const slug = readSlug(r, raw['slug']);
  const base = r.string(raw['base'], 'base');
  const baseProblem = base === undefined ? undefined : revisionProblem(base);
  if (baseProblem) r.problem('base', 'bad_ref', `${JSON.stringify(base)} ${baseProblem}`);
  const jobs = r.integer(raw['jobs'], 'jobs', 1);
  const retain = r.integer(raw['retain'], 'retain', 1);
  const land = r.string(raw['land'], 'land');
  const landProblem = land === undefined ? undefined : branchNameProblem(land);
  if (landProblem) r.problem('land', 'bad_ref', `branch ${JSON.stringify(land)} ${landProblem}`);
  const workdir = readWorkdir(r, raw['workdir']);
  const minFree = r.size(raw['min_free'], 'min_free');
  const ownership = r.oneOf(raw['ownership'], 'ownership', ['auto', 'cgroup', 'group+tag'] as const);
  const cgroupParent = r.string(raw['cgroup_parent'], 'cgroup_parent');
  const keepGoing = r.boolean(raw['keep_going'], 'keep_going');
  const secretEnv = r.stringList(raw['secret_env'], 'secret_env') ?? [];
  secretEnv.forEach((name, i) => {
    if (!isEnvName(name)) r.problem(keyPath('secret_env', i), 'bad_env_name', `${JSON.stringify(name)} is not a variable name`);
  });

  const hooksTable = r.table(raw['hooks'], 'hooks') ?? {};
  r.keys(hooksTable, HOOK_KEYS, 'hooks');
  const hookTimeout = r.duration(hooksTable['timeout'], 'hooks.timeout');
  const hooks: Plan['hooks'] = { timeoutMs: typeof hookTimeout === 'number' ? hookTimeout : PLAN_DEFAULTS.hookTimeoutMs };
  const preRun = r.argv(hooksTable['pre_run'], 'hooks.pre_run', 'pre_run');
  const postRun = r.argv(hooksTable['post_run'], 'hooks.post_run', 'post_run');
  if (preRun) hooks.preRun = preRun;
  if (postRun) hooks.postRun = postRun;

  const budgetTable = r.table(raw['budget'], 'budget') ?? {};
  r.keys(budgetTable, BUDGET_KEYS, 'budget');
  const budget: Plan['budget'] = {};
  const maxTokens = r.integer(budgetTable['max_tokens'], 'budget.max_tokens', 1);
  const maxCostUsd = r.positiveNumber(budgetTable['max_cost_usd'], 'budget.max_cost_usd');
  if (maxTokens !== undefined) budget.maxTokens = maxTokens;
  if (maxCostUsd !== undefined) budget.maxCostUsd = maxCostUsd;
  checkBudgetVars(r, raw, budget);

  const repair = readRepair(r, raw['repair'], 'repair', DEFAULT_CAPS);

  const executor = readExecutor(r, raw['executor'], 'executor');

  const defaultsTable = r.table(raw['defaults'], 'defaults') ?? {};
  r.keys(defaultsTable, DEFAULT_KEYS, 'defaults');
  // The files the plan names are read first, once each; the rest is synchronous.
  const files = await readPlanFiles(raw, dir);
  if (seen !== undefined) seen.files = files;
  const defaults = readTaskKeys(r, defaultsTable, 'defaults', files);

  const formats: { path: string; id: string; format: AgentFormat }[] = [];
  const tasks = readTasks(
    r,
    raw['tasks'],
    { defaults, repair, files, defaultsGiveCommand: defaultsTable['command'] !== undefined, ...(executor ? { executor } : {}) },
    formats,
  );

  // Every task's format, also of tasks with other problems: the list is complete.
  for (const { path, id, format } of formats) {
    if (budget.maxTokens !== undefined && (format === 'text' || format === 'cursor-stream-json')) {
      r.problem('budget.max_tokens', 'budget_unreportable', `task ${id} (${path}) has format ${format}, which reports no tokens`);
    }
    if (budget.maxCostUsd !== undefined && format !== 'claude-stream-json') {
      r.problem('budget.max_cost_usd', 'budget_unreportable', `task ${id} (${path}) has format ${format}, which reports no cost`);
    }
  }

  if (r.problems.length > 0) return err(r.problems);
  const plan: Plan = {
    file,
    dir,
    slug: slug!,
    base: base ?? PLAN_DEFAULTS.base,
    jobs: jobs ?? PLAN_DEFAULTS.jobs,
    secretEnv,
    hooks,
    budget,
    repair,
    tasks,
    raw,
  };
  if (retain !== undefined) plan.retain = retain;
  if (land !== undefined) plan.land = land;
  if (workdir !== undefined) plan.workdir = workdir;
  if (minFree !== undefined) plan.minFree = minFree;
  if (ownership !== undefined) plan.ownership = ownership;
  if (cgroupParent !== undefined) plan.cgroupParent = resolve(dir, cgroupParent);
  if (keepGoing === true) plan.keepGoing = true;
  return ok(plan);
}

// Task ids in dependency order; among ready tasks, file order.
export function topologicalOrder(plan: Pick<Plan, 'tasks'>): string[] {
  return dependencyOrder(plan.tasks);
}

function readSlug(r: PlanReader, value: unknown): string | undefined {
  if (value === undefined) {
    r.problem('slug', 'missing_key', 'every plan needs a slug (it names the state and the branch runplan/<slug>)');
    return undefined;
  }
  const slug = r.string(value, 'slug');
  if (slug === undefined) return undefined;
  if (!isIdentifier(slug)) {
    r.problem('slug', 'bad_identifier', `${JSON.stringify(slug)} is not an identifier ([A-Za-z0-9][A-Za-z0-9._-]*)`);
    return undefined;
  }
  const tooLong = idLengthProblem(slug);
  if (tooLong) {
    r.problem('slug', 'bad_identifier', tooLong);
    return undefined;
  }
  const refProblem = refComponentProblem(slug);
  if (refProblem) {
    r.problem('slug', 'bad_ref', `git refuses the branch runplan/${slug}: the slug ${refProblem}`);
    return undefined;
  }
  return slug;
}

// The attempt-directory template: a valid workdir-tier path template that differs per attempt.
function readWorkdir(r: PlanReader, value: unknown): string | undefined {
  const text = r.string(value, 'workdir');
  if (text === undefined) return undefined;
  const parsed = parsePathTemplate(text);
  if (!parsed.ok) {
    r.problem('workdir', parsed.error.reason, parsed.error.message);
    return undefined;
  }
  const names = new Set(parsed.value.elements.flatMap((e) => e.variables));
  const missing = ['run.id', 'task.id', 'run.attempt'].filter((n) => !names.has(n));
  if (missing.length > 0) {
    r.problem(
      'workdir',
      'workdir_not_unique',
      `every attempt needs its own directory: the template must name ${missing.map((n) => `{{${n}}}`).join(', ')}`,
    );
    return undefined;
  }
  return text;
}
