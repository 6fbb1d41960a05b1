import { resolve } from 'node:path';
import { isIdentifier } from '@runplan/workdir';
import { isEnvName, parseEnvFile } from './env-file.js';
import type { PlanFiles } from './files.js';
import { keyPath, type PlanReader, type Table } from './reader.js';
import { AGENT_FORMATS } from './types.js';
import type { AgentFormat, RepairCaps } from './types.js';

// The keys one table gives a task — `[defaults]` or a `[[tasks]]` entry — read and checked.

/** Keys of `[repair]` and of a task's `repair = {…}`. */
export const REPAIR_KEYS = ['task', 'gate', 'timeout', 'provider', 'integration', 'backoff', 'provider_exit_codes', 'provider_max_wait'];
/** Keys `[defaults]` may give every task. */
export const DEFAULT_KEYS = [
  'command',
  'format',
  'model',
  'deadline',
  'stall',
  'grace',
  'result_grace',
  'gate_deadline',
  'expect',
  'env',
  'env_file',
  'gates',
  'rounds',
  'stagnation_rounds',
  'blocked_exit',
];
const EXPECT = ['commit', 'none'] as const;

/** The per-task keys after reading one table (`[defaults]` or a task); undefined = not given or invalid. */
export interface TaskKeys {
  command?: string[];
  format?: AgentFormat;
  model?: string;
  deadlineMs?: number;
  stall?: number | 'off';
  graceMs?: number;
  resultGraceMs?: number;
  gateDeadlineMs?: number;
  expect?: 'commit' | 'none';
  env?: Record<string, string>;
  envFile?: { ref: string; path: string; values: Record<string, string> };
  gates?: string[][];
  rounds?: number;
  stagnationRounds?: number;
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
  const maxWait = r.duration(table['provider_max_wait'], keyPath(path, 'provider_max_wait'), { allowZero: true });
  if (typeof maxWait === 'number') caps.providerMaxWaitMs = maxWait;
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
    ['result_grace', 'resultGraceMs'],
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
  if (t['stagnation_rounds'] !== undefined) {
    const stagnationRounds = r.integer(t['stagnation_rounds'], at('stagnation_rounds'), 2);
    if (stagnationRounds !== undefined) keys.stagnationRounds = stagnationRounds;
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
    if (text?.includes('\0')) r.problem(p, 'nul_byte', 'holds a NUL byte, which no environment variable can carry');
    else if (text !== undefined) env[name] = text;
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

export function readText(r: PlanReader, files: PlanFiles, file: string, path: string, what: string): string | undefined {
  const read = files.read.get(file);
  if (read !== undefined && 'text' in read) return read.text;
  r.problem(path, 'missing_file', `${what} ${file} cannot be read (${read?.code ?? 'not read'}); it is relative to the plan file`);
  return undefined;
}
