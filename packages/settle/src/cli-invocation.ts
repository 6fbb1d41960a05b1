import { constants } from 'node:os';
import { dashLedValues, kebabSwitches, parseCommandLineDuration, typedValues } from '@runplan/common';
import type { OwnershipMode } from './cgroup.js';
import { isOwnershipMode } from './ownership-choice.js';
import type { SettleSpec } from './types.js';

// settle's command line: parsed into an Invocation, and the SettleSpec that asks for.

/** What settle's command line asks for; `main` turns it into a SettleSpec (`specOf`). */
export interface Invocation {
  command: string[];
  deadlineMs?: number;
  graceMs?: number;
  killAfterMs?: number;
  stallMs?: number;
  killSignal?: NodeJS.Signals;
  preserveStatus: boolean;
  input?: string;
  report?: string;
  cwd?: string;
  ownership?: OwnershipMode;
  cgroupParent?: string;
  env: Record<string, string>;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

// settle's options as cac declares them (cac's descriptions go unused: --help prints helpText).
const optionTable: ReadonlyArray<readonly [flags: string, description: string, config?: { type: unknown[] }]> = [
  ['--deadline <dur>', 'deadline'],
  ['--grace <dur>', 'grace'],
  ['-k, --kill-after <dur>', 'kill after'],
  ['-s, --signal <name>', 'first signal'],
  ['--stall <dur>', 'stall'],
  ['-p, --preserve-status', 'preserve status'],
  ['--version', 'version'],
  ['--input <file>', 'input'],
  ['--report <file>', 'report'],
  ['--cwd <dir>', 'cwd'],
  ['--ownership <mode>', 'ownership'],
  ['--cgroup-parent <dir>', 'cgroup parent'],
  ['--env <kv>', 'env', { type: [String] }],
  ['-h, --help', 'help'],
];

// The keys cac's parse gives settle's options (and aliases); any other is an unknown option.
const knownOptions = new Set([
  '--',
  'deadline',
  'grace',
  'killAfter',
  'k',
  'signal',
  's',
  'stall',
  'preserveStatus',
  'p',
  'input',
  'report',
  'cwd',
  'ownership',
  'cgroupParent',
  'env',
  'h',
  'help',
  'version',
]);

// Parses argv. The common `settle -- cmd` skips cac entirely (start-up time); anything
// with options goes through cac.
export async function parse(argv: string[]): Promise<Invocation | 'help' | 'version'> {
  if (argv[0] === '--') {
    if (argv.length < 2) throw new UsageError('no command after --');
    return { command: argv.slice(1), env: {}, preserveStatus: false };
  }
  const { cac } = await import('cac');
  const cli = cac('settle');
  for (const [flags, description, config] of optionTable) cli.option(flags, description, config);
  const cut = argv.indexOf('--');
  kebabSwitches(cli);
  // `--input -`, `--deadline -5`: the value as the option's (then refused or taken as typed).
  const own = dashLedValues(cli, cut < 0 ? argv : argv.slice(0, cut));
  const parsed = cli.parse(['node', 'settle', ...own, ...(cut < 0 ? [] : argv.slice(cut))], { run: false });
  const o = parsed.options as Record<string, unknown>;
  if (o.help || o.h) return 'help';
  if (o.version) return 'version';
  for (const key of Object.keys(o)) {
    if (!knownOptions.has(key)) throw new UsageError(`unknown option --${key}`);
  }
  if (parsed.args.length > 0) throw new UsageError(`put -- before the command: settle [options] -- ${parsed.args.join(' ')}`);
  const command = (o['--'] as string[] | undefined) ?? [];
  if (command.length === 0) throw new UsageError('no command: settle [options] -- CMD [ARGS...]');
  const invocation: Invocation = { command, env: {}, preserveStatus: o.preserveStatus === true };
  const duration = (name: string, flag = name): number | undefined => {
    const value = o[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' && typeof value !== 'number') throw new UsageError(`--${flag} takes one duration`);
    // mri turns `4294967296` into a number (and `1e-5000` into 0): read what was typed.
    const typed = typedValue(own, flag) ?? String(value);
    const ms = parseCommandLineDuration(typed);
    if (ms === undefined) throw new UsageError(`--${flag} ${typed} is not a duration (500ms, 30s, 10m, 2h, 1d, or seconds)`);
    return ms;
  };
  const text = (name: string, flag = name): string | undefined => {
    const value = o[name];
    if (value === undefined) return undefined;
    if (typeof value === 'boolean' || Array.isArray(value)) throw new UsageError(`--${flag} needs one value`);
    // mri turns `--cwd 010` into 10 and `--input ''` into 0 (a file named `0`): read what was typed.
    const typed = typedValue(own, flag) ?? String(value);
    if (typed === '') throw new UsageError(`--${flag} needs one value`);
    return typed;
  };
  const deadlineMs = duration('deadline');
  const graceMs = duration('grace');
  const killAfterMs = duration('killAfter', 'kill-after');
  const stallMs = duration('stall');
  // As in GNU timeout, a zero deadline or stall means none.
  if (deadlineMs) invocation.deadlineMs = deadlineMs;
  if (graceMs !== undefined) invocation.graceMs = graceMs;
  if (killAfterMs !== undefined) invocation.killAfterMs = killAfterMs;
  if (stallMs) invocation.stallMs = stallMs;
  const signal = text('signal');
  if (signal !== undefined) invocation.killSignal = signalNamed(signal);
  const input = text('input');
  if (input !== undefined) invocation.input = input;
  const report = text('report');
  if (report !== undefined) invocation.report = report;
  const cwd = text('cwd');
  if (cwd !== undefined) invocation.cwd = cwd;
  const ownership = text('ownership');
  if (ownership !== undefined) {
    if (!isOwnershipMode(ownership)) throw new UsageError(`--ownership ${ownership} is not auto, cgroup or group+tag`);
    invocation.ownership = ownership;
  }
  const cgroupParent = text('cgroupParent', 'cgroup-parent');
  if (cgroupParent !== undefined) invocation.cgroupParent = cgroupParent;
  const envs = (o.env as unknown[] | undefined) ?? [];
  const typedEnvs = typedValues(own, 'env');
  for (const pair of typedEnvs.length === envs.length ? typedEnvs : envs.map(String)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--env ${pair} is not K=V`);
    invocation.env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return invocation;
}

// The text given to `--flag V`, `--flag=V` (or `-k V` for kill-after, `-s V` for signal), the last one if repeated.
function typedValue(own: readonly string[], flag: string): string | undefined {
  const names = flag === 'kill-after' ? ['--kill-after', '-k'] : flag === 'signal' ? ['--signal', '-s'] : [`--${flag}`];
  let found: string | undefined;
  for (let i = 0; i < own.length; i++) {
    const arg = own[i]!;
    const name = names.find((n) => arg === n || arg.startsWith(`${n}=`));
    if (name === undefined) continue;
    found = arg === name ? own[++i] : arg.slice(name.length + 1);
  }
  return found;
}

// TERM, SIGTERM, term or 15 → SIGTERM.
function signalNamed(text: string): NodeJS.Signals {
  const signals = constants.signals as Record<string, number>;
  if (/^\d+$/.test(text)) {
    const name = Object.keys(signals).find((n) => signals[n] === Number(text));
    if (name) return name as NodeJS.Signals;
  } else {
    const upper = text.toUpperCase();
    const name = upper.startsWith('SIG') ? upper : `SIG${upper}`;
    if (name in signals) return name as NodeJS.Signals;
  }
  throw new UsageError(`--signal ${text} is not a signal name`);
}

// The SettleSpec an invocation asks for; `signal` aborts it (settle's own teardown signals).
export function specOf(inv: Invocation, signal: AbortSignal): SettleSpec {
  return {
    argv: inv.command,
    env: inv.env,
    input: inv.input === undefined || inv.input === '-' ? 'inherit' : { file: inv.input },
    stderr: 'inherit',
    signal,
    ...(inv.cwd !== undefined ? { cwd: inv.cwd } : {}),
    ...(inv.ownership !== undefined ? { ownership: inv.ownership } : {}),
    ...(inv.cgroupParent !== undefined ? { cgroupParent: inv.cgroupParent } : {}),
    ...(inv.deadlineMs !== undefined ? { deadlineMs: inv.deadlineMs } : {}),
    ...(inv.graceMs !== undefined ? { graceMs: inv.graceMs } : {}),
    ...(inv.killAfterMs !== undefined ? { killAfterMs: inv.killAfterMs } : {}),
    ...(inv.stallMs !== undefined ? { stallMs: inv.stallMs } : {}),
    ...(inv.killSignal !== undefined ? { killSignal: inv.killSignal } : {}),
  };
}
