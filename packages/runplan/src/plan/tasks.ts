import { resolve } from 'node:path';
import { isIdentifier } from '@runplan/workdir';
import type { PlanFiles } from './files.js';
import { findCycles } from './graph.js';
import { keyPath, type PlanReader, type Table } from './reader.js';
import { DEFAULT_KEYS, readRepair, readTaskKeys, readText, type TaskKeys } from './task-keys.js';
import { readExecutor, readGatesExecutor } from '../executor/plan-keys.js';
import type { ExecutorSpec } from '../executor/spec.js';
import { PLAN_DEFAULTS } from './types.js';
import type { AgentFormat, RepairCaps, TaskSpec } from './types.js';

// The task half of plan validation: each `[[tasks]]` entry over `[defaults]`, and their needs.

export { DEFAULT_KEYS, readRepair, readTaskKeys };
export { readPlanFiles } from './files.js';

/** Keys of a `[[tasks]]` entry. */
export const TASK_KEYS = ['id', 'needs', 'prompt', 'prompt_file', 'until', 'repair', 'executor', 'gates_executor', ...DEFAULT_KEYS];

/** What every task is read against: `[defaults]`, the plan's `[repair]`, the named files. */
export interface TaskDefaults {
  defaults: TaskKeys;
  repair: RepairCaps;
  files: PlanFiles;
  /** `[defaults]` gives a command, so a task need not. */
  defaultsGiveCommand: boolean;
  /** The plan's `[executor]` (undefined: none given, so local). */
  executor?: ExecutorSpec;
}

// Reads `[[tasks]]`; each task's format goes to `formats` (checked against the plan's models later).
export function readTasks(
  r: PlanReader,
  value: unknown,
  base: TaskDefaults,
  formats: { path: string; id: string; format: AgentFormat }[],
): TaskSpec[] {
  const { defaults, files } = base;
  if (value === undefined) {
    r.problem('tasks', 'missing_key', 'a plan needs at least one [[tasks]] entry');
    return [];
  }
  if (!Array.isArray(value)) {
    r.problem('tasks', 'wrong_type', 'must be an array of tables ([[tasks]])');
    return [];
  }
  if (value.length === 0) r.problem('tasks', 'missing_key', 'a plan needs at least one [[tasks]] entry');
  const tasks: TaskSpec[] = [];
  const firstIndex = new Map<string, number>();
  const needsAt: { index: number; needs: string[] }[] = [];
  for (const [i, item] of value.entries()) {
    const path = keyPath('tasks', i);
    const t = r.table(item, path);
    if (!t) continue;
    r.keys(t, TASK_KEYS, path);
    const id = readTaskId(r, t['id'], keyPath(path, 'id'), firstIndex, i);
    const needs = (t['needs'] === undefined ? undefined : r.stringList(t['needs'], keyPath(path, 'needs'))) ?? [];
    needsAt.push({ index: i, needs });
    const own = readTaskKeys(r, t, path, files);
    formats.push({ path, id: id ?? `#${i}`, format: own.format ?? defaults.format ?? PLAN_DEFAULTS.format });
    const task = buildTask(r, { t, path, id: id ?? `#${i}`, needs, own }, base);
    if (task && id !== undefined) tasks.push(task);
  }
  checkNeeds(r, needsAt, firstIndex);
  return tasks;
}

/** Positions of the argv elements that name {{model}}, per argv array (tasks share [defaults]' arrays). */
const mentionsByArgv = new WeakMap<readonly string[], number[]>();
const NO_MENTIONS: number[] = [];

function modelMentions(argv: readonly string[]): number[] {
  let found = mentionsByArgv.get(argv);
  if (found === undefined) {
    const at: number[] = [];
    argv.forEach((element, j) => {
      if (/\{\{\s*model\s*\}\}/.test(element)) at.push(j);
    });
    found = at.length > 0 ? at : NO_MENTIONS;
    mentionsByArgv.set(argv, found);
  }
  return found;
}

/**
 * The longest slug or task id: each names directories (`<slug>/`, `work/<run id>.<task>.<attempt>`,
 * `evidence/<task>.<attempt>`) and branch components, and a file name has at most 255 bytes.
 * Longer ones passed validate and failed the run (ENAMETOOLONG: internal_error, state_unwritable).
 */
export const MAX_ID_LENGTH = 100;

// The problem with an identifier too long to name files, or undefined.
export function idLengthProblem(id: string): string | undefined {
  return id.length > MAX_ID_LENGTH
    ? `${JSON.stringify(`${id.slice(0, 20)}…`)} is ${id.length} characters long: at most ${MAX_ID_LENGTH} (it names directories and branches)`
    : undefined;
}

function readTaskId(r: PlanReader, value: unknown, path: string, firstIndex: Map<string, number>, index: number): string | undefined {
  if (value === undefined) {
    r.problem(path, 'missing_key', 'every task needs an id');
    return undefined;
  }
  const id = r.string(value, path);
  if (id === undefined) return undefined;
  if (!isIdentifier(id)) {
    r.problem(path, 'bad_identifier', `${JSON.stringify(id)} is not an identifier ([A-Za-z0-9][A-Za-z0-9._-]*)`);
    return undefined;
  }
  const tooLong = idLengthProblem(id);
  if (tooLong) {
    r.problem(path, 'bad_identifier', tooLong);
    return undefined;
  }
  const first = firstIndex.get(id);
  if (first !== undefined) {
    r.problem(path, 'duplicate_id', `task id ${JSON.stringify(id)} is already used by tasks[${first}]`);
    return undefined;
  }
  firstIndex.set(id, index);
  return id;
}

// Unknown, repeated and cyclic needs, each at its key path.
function checkNeeds(r: PlanReader, needsAt: { index: number; needs: string[] }[], firstIndex: Map<string, number>): void {
  const idAt = new Map([...firstIndex].map(([id, i]) => [i, id] as const));
  for (const { index, needs } of needsAt) {
    if (needs.length === 0) continue;
    const seen = new Set<string>();
    needs.forEach((need, j) => {
      const path = (): string => keyPath(keyPath(keyPath('tasks', index), 'needs'), j);
      if (seen.has(need)) r.problem(path(), 'duplicate_need', `${JSON.stringify(need)} is listed twice`);
      seen.add(need);
      if (!firstIndex.has(need)) r.problem(path(), 'unknown_need', `no task has the id ${JSON.stringify(need)}`);
    });
  }
  const nodes = needsAt.filter((n) => idAt.has(n.index)).map((n) => ({ id: idAt.get(n.index)!, needs: n.needs }));
  for (const cycle of findCycles(nodes)) {
    const index = firstIndex.get(cycle[0]!)!;
    r.problem(keyPath(keyPath('tasks', index), 'needs'), 'cycle', `needs form a cycle: ${cycle.join(' → ')}`);
  }
}

/** One `[[tasks]]` entry as readTasks found it. */
interface TaskEntry {
  t: Table;
  path: string;
  id: string;
  needs: string[];
  /** The keys the entry itself gives. */
  own: TaskKeys;
}

// One task: its own keys over `[defaults]`, its prompt, and the checks that need both.
function buildTask(r: PlanReader, entry: TaskEntry, base: TaskDefaults): TaskSpec | undefined {
  const { t, path, id, needs, own } = entry;
  const { defaults, repair: planRepair, files, defaultsGiveCommand } = base;
  const at = (key: string): string => keyPath(path, key);
  const command = own.command ?? defaults.command;
  if (t['command'] === undefined && !defaultsGiveCommand) {
    r.problem(at('command'), 'missing_key', `task ${id} has no command and [defaults] gives none`);
  }
  let prompt = t['prompt'] === undefined ? undefined : r.string(t['prompt'], at('prompt'));
  const promptRef = t['prompt_file'] === undefined ? undefined : r.string(t['prompt_file'], at('prompt_file'));
  let promptFile: string | undefined;
  if (t['prompt'] !== undefined && t['prompt_file'] !== undefined) {
    r.problem(at('prompt_file'), 'prompt_conflict', 'give prompt or prompt_file, not both');
  } else if (promptRef !== undefined) {
    promptFile = resolve(files.dir, promptRef);
    prompt = readText(r, files, promptFile, at('prompt_file'), 'prompt_file');
  }
  const until = t['until'] === undefined ? undefined : r.argv(t['until'], at('until'), 'pre_run');
  if (t['rounds'] !== undefined && t['until'] === undefined) {
    r.problem(at('rounds'), 'rounds_without_until', 'rounds only counts improve-verify rounds; this task has no until');
  }
  const repair = readRepair(r, t['repair'], t['repair'] === undefined ? 'repair' : at('repair'), planRepair);
  const model = own.model ?? defaults.model;
  const format = own.format ?? defaults.format ?? PLAN_DEFAULTS.format;
  // {{model}} in an argv with no model to fill it would fail only at dispatch.
  if (model === undefined) {
    const argvs: [string, string[] | undefined][] = [
      ['command', command],
      ['until', until],
      ...(own.gates ?? defaults.gates ?? []).map((g, i) => [keyPath('gates', i), g] as [string, string[]]),
    ];
    for (const [key, argv] of argvs) {
      if (argv === undefined) continue;
      for (const j of modelMentions(argv)) {
        r.problem(
          keyPath(at(key), j),
          'missing_value',
          `names {{model}} but task ${id} has no model (set model on the task or in [defaults])`,
        );
      }
    }
  }
  if (!command) return undefined;
  const stall = own.stall ?? defaults.stall;
  const envFile = own.envFile ?? defaults.envFile;
  const task: TaskSpec = {
    id,
    needs,
    command,
    format,
    gates: own.gates ?? defaults.gates ?? [],
    deadlineMs: own.deadlineMs ?? defaults.deadlineMs ?? PLAN_DEFAULTS.deadlineMs,
    graceMs: own.graceMs ?? defaults.graceMs ?? PLAN_DEFAULTS.graceMs,
    gateDeadlineMs: own.gateDeadlineMs ?? defaults.gateDeadlineMs ?? PLAN_DEFAULTS.gateDeadlineMs,
    expect: own.expect ?? defaults.expect ?? PLAN_DEFAULTS.expect,
    env: { ...defaults.env, ...own.env },
    envFileValues: envFile ? { ...envFile.values } : {},
    rounds: own.rounds ?? defaults.rounds ?? PLAN_DEFAULTS.rounds,
    stagnationRounds: own.stagnationRounds ?? defaults.stagnationRounds ?? PLAN_DEFAULTS.stagnationRounds,
    repair,
  };
  if (prompt !== undefined) task.prompt = prompt;
  if (promptFile !== undefined) task.promptFile = promptFile;
  if (model !== undefined) task.model = model;
  if (typeof stall === 'number') task.stallMs = stall;
  // Set only when given, so a plan without the key keeps its digest.
  const resultGraceMs = own.resultGraceMs ?? defaults.resultGraceMs;
  if (resultGraceMs !== undefined) task.resultGraceMs = resultGraceMs;
  if (envFile) {
    task.envFile = envFile.path;
    task.envFileRef = envFile.ref;
  }
  if (until) task.until = until;
  const blockedExit = own.blockedExit ?? defaults.blockedExit;
  if (blockedExit !== undefined) task.blockedExit = blockedExit;
  placeTask(r, { t, path, task }, base.executor);
  return task;
}

// Where the task's command and gates run: its own executor over the plan's, then
// gates_executor; only a slurm placement is written into the task (local is the default).
function placeTask(r: PlanReader, at: { t: Table; path: string; task: TaskSpec }, planExecutor: ExecutorSpec | undefined): void {
  const { t, path, task } = at;
  const executor = readExecutor(r, t['executor'], keyPath(path, 'executor')) ?? planExecutor;
  if (executor?.kind === 'slurm') task.executor = executor;
  const slurm = executor?.kind === 'slurm' ? executor : planExecutor;
  const gates = readGatesExecutor(r, t['gates_executor'], keyPath(path, 'gates_executor'), slurm);
  if (gates !== undefined && gates.kind !== (executor?.kind ?? 'local')) task.gatesExecutor = gates;
}
