import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isIdentifier } from '@runplan/workdir';
import { isEnvName, parseEnvFile } from './env-file.js';
import { findCycles } from './graph.js';
import { isTable, keyPath, type PlanReader } from './reader.js';
import type { Table } from './reader.js';
import { AGENT_FORMATS, PLAN_DEFAULTS } from './types.js';
import type { AgentFormat, RepairCaps, TaskSpec } from './types.js';

// The task half of plan validation: `[defaults]`, each `[[tasks]]` entry, their needs.

const REPAIR_KEYS = ['task', 'gate', 'timeout', 'provider', 'integration', 'backoff', 'provider_exit_codes'];
/** Keys `[defaults]` may give every task. */
export const DEFAULT_KEYS = [
  'command',
  'format',
  'model',
  'deadline',
  'stall',
  'grace',
  'gate_deadline',
  'expect',
  'env',
  'env_file',
  'gates',
  'rounds',
  'blocked_exit',
];
const TASK_KEYS = ['id', 'needs', 'prompt', 'prompt_file', 'until', 'repair', ...DEFAULT_KEYS];
const EXPECT = ['commit', 'none'] as const;

/** The per-task keys after reading one table (`[defaults]` or a task); undefined = not given or invalid. */
export interface TaskKeys {
  command?: string[];
  format?: AgentFormat;
  model?: string;
  deadlineMs?: number;
  stall?: number | 'off';
  graceMs?: number;
  gateDeadlineMs?: number;
  expect?: 'commit' | 'none';
  env?: Record<string, string>;
  envFile?: { ref: string; path: string; values: Record<string, string> };
  gates?: string[][];
  rounds?: number;
  blockedExit?: number;
}

// `[repair]` or a task's `repair = {…}`: known keys only, each cap over `base`.
export function readRepair(r: PlanReader, value: unknown, path: string, base: RepairCaps): RepairCaps {
  const table = r.table(value, path);
  if (!table) return { ...base, providerExitCodes: [...base.providerExitCodes] };
  r.keys(table, REPAIR_KEYS, path);
  const caps: RepairCaps = { ...base, providerExitCodes: [...base.providerExitCodes] };
  for (const key of ['task', 'gate', 'timeout', 'provider', 'integration'] as const) {
    const cap = r.integer(table[key], keyPath(path, key), 0);
    if (cap !== undefined) caps[key] = cap;
  }
  const backoff = r.duration(table['backoff'], keyPath(path, 'backoff'), { allowZero: true });
  if (typeof backoff === 'number') caps.backoffMs = backoff;
  const codes = table['provider_exit_codes'];
  if (codes !== undefined) {
    const codesPath = keyPath(path, 'provider_exit_codes');
    if (!Array.isArray(codes)) r.problem(codesPath, 'wrong_type', 'must be an array of exit codes');
    else {
      const read = codes.map((c, i) => r.integer(c, keyPath(codesPath, i), 1, 255));
      if (read.every((c) => c !== undefined)) caps.providerExitCodes = read as number[];
    }
  }
  return caps;
}

// The keys a task shares with `[defaults]`, checked at `path`. Absent keys are skipped
// before their key path is even spelled (a 10 000-task plan has 10 000 of each).
export function readTaskKeys(r: PlanReader, t: Table, path: string, files: PlanFiles): TaskKeys {
  const keys: TaskKeys = {};
  const at = (key: string): string => keyPath(path, key);
  if (t['command'] !== undefined) {
    const command = r.argv(t['command'], at('command'), 'pre_run');
    if (command) keys.command = command;
  }
  if (t['format'] !== undefined) {
    const format = r.oneOf(t['format'], at('format'), AGENT_FORMATS);
    if (format) keys.format = format;
  }
  if (t['model'] !== undefined) {
    const model = r.string(t['model'], at('model'));
    if (model !== undefined) {
      if (isIdentifier(model)) keys.model = model;
      else
        r.problem(at('model'), 'bad_identifier', `${JSON.stringify(model)} is not an identifier ({{model}} must be safe as one argument)`);
    }
  }
  const durations = [
    ['deadline', 'deadlineMs'],
    ['grace', 'graceMs'],
    ['gate_deadline', 'gateDeadlineMs'],
  ] as const;
  for (const [key, field] of durations) {
    if (t[key] === undefined) continue;
    const ms = r.duration(t[key], at(key), { allowZero: key === 'grace' });
    if (typeof ms === 'number') keys[field] = ms;
  }
  if (t['stall'] !== undefined) {
    const stall = r.duration(t['stall'], at('stall'), { allowOff: true });
    if (stall !== undefined) keys.stall = stall;
  }
  if (t['expect'] !== undefined) {
    const expect = r.oneOf(t['expect'], at('expect'), EXPECT);
    if (expect) keys.expect = expect;
  }
  if (t['env'] !== undefined) {
    const env = readEnv(r, t['env'], at('env'));
    if (env) keys.env = env;
  }
  if (t['env_file'] !== undefined) {
    const envFile = readEnvFile(r, t['env_file'], at('env_file'), files);
    if (envFile) keys.envFile = envFile;
  }
  if (t['gates'] !== undefined) {
    const gates = r.argvList(t['gates'], at('gates'), 'pre_run');
    if (gates) keys.gates = gates;
  }
  if (t['rounds'] !== undefined) {
    const rounds = r.integer(t['rounds'], at('rounds'), 1);
    if (rounds !== undefined) keys.rounds = rounds;
  }
  if (t['blocked_exit'] !== undefined) {
    const blockedExit = r.integer(t['blocked_exit'], at('blocked_exit'), 1, 255);
    if (blockedExit !== undefined) keys.blockedExit = blockedExit;
  }
  return keys;
}

function readEnv(r: PlanReader, value: unknown, path: string): Record<string, string> | undefined {
  const table = r.table(value, path);
  if (!table) return undefined;
  const env: Record<string, string> = {};
  for (const [name, v] of Object.entries(table)) {
    const p = keyPath(path, name);
    if (!isEnvName(name)) r.problem(p, 'bad_env_name', `${JSON.stringify(name)} is not a variable name`);
    const text = r.string(v, p);
    if (text !== undefined) env[name] = text;
  }
  return env;
}

function readEnvFile(r: PlanReader, value: unknown, path: string, files: PlanFiles): TaskKeys['envFile'] {
  const ref = r.string(value, path);
  if (ref === undefined) return undefined;
  const file = resolve(files.dir, ref);
  const text = readText(r, files, file, path, 'env_file');
  if (text === undefined) return undefined;
  const parsed = parseEnvFile(text);
  if (!parsed.ok) {
    r.problem(path, 'bad_env_file', `${file}: ${parsed.error.message}`);
    return undefined;
  }
  return { ref, path: file, values: parsed.value };
}

function readText(r: PlanReader, files: PlanFiles, file: string, path: string, what: string): string | undefined {
  const read = files.read.get(file);
  if (read !== undefined && 'text' in read) return read.text;
  r.problem(path, 'missing_file', `${what} ${file} cannot be read (${read?.code ?? 'not read'}); it is relative to the plan file`);
  return undefined;
}

/**
 * The files a plan names (`env_file`, `prompt_file`), read once each before validation,
 * so validating each of many tasks is plain synchronous work: `dir` is the plan's
 * directory, `read` maps each resolved path to its text or its error code.
 */
export interface PlanFiles {
  dir: string;
  read: Map<string, { text: string } | { code: string }>;
}

// Reads every env_file and prompt_file that `[defaults]` or a task names as a string.
export async function readPlanFiles(raw: Table, dir: string): Promise<PlanFiles> {
  const refs = new Set<string>();
  const collect = (table: unknown): void => {
    if (!isTable(table)) return;
    // prompt_file beside prompt is a conflict, never read.
    const keys = table['prompt'] === undefined ? ['env_file', 'prompt_file'] : ['env_file'];
    for (const key of keys) {
      const ref = table[key];
      if (typeof ref === 'string') refs.add(resolve(dir, ref));
    }
  };
  collect(raw['defaults']);
  if (Array.isArray(raw['tasks'])) for (const task of raw['tasks']) collect(task);
  const read = new Map<string, { text: string } | { code: string }>();
  await Promise.all(
    [...refs].map(async (file) => {
      try {
        read.set(file, { text: await readFile(file, 'utf8') });
      } catch (e) {
        read.set(file, { code: (e as NodeJS.ErrnoException).code ?? String(e) });
      }
    }),
  );
  return { dir, read };
}

export function readTasks(
  r: PlanReader,
  value: unknown,
  defaults: TaskKeys,
  repair: RepairCaps,
  files: PlanFiles,
  formats: { path: string; id: string; format: AgentFormat }[],
  defaultsGiveCommand: boolean,
): TaskSpec[] {
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
    const task = buildTask(r, t, path, id ?? `#${i}`, needs, own, defaults, repair, files, defaultsGiveCommand);
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

function buildTask(
  r: PlanReader,
  t: Table,
  path: string,
  id: string,
  needs: string[],
  own: TaskKeys,
  defaults: TaskKeys,
  planRepair: RepairCaps,
  files: PlanFiles,
  defaultsGiveCommand: boolean,
): TaskSpec | undefined {
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
    repair,
  };
  if (prompt !== undefined) task.prompt = prompt;
  if (promptFile !== undefined) task.promptFile = promptFile;
  if (model !== undefined) task.model = model;
  if (typeof stall === 'number') task.stallMs = stall;
  if (envFile) {
    task.envFile = envFile.path;
    task.envFileRef = envFile.ref;
  }
  if (until) task.until = until;
  const blockedExit = own.blockedExit ?? defaults.blockedExit;
  if (blockedExit !== undefined) task.blockedExit = blockedExit;
  return task;
}
