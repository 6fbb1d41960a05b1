import { existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, resolve } from 'node:path';
import { formatDuration, parseDuration, unreachable } from '@runplan/common';
import type { Readable, Writable } from 'node:stream';
import { exitCodeFor } from './exit-code.js';
import { isAlive, processIdentity, type ProcessIdentity } from './identity.js';
import { passThrough } from './pass-through.js';
import { reportOf, writeReport } from './report.js';
import { stream } from './stream.js';
import type { Execution, SettleSpec } from './types.js';

const usageLine =
  'settle [--deadline DUR] [--grace DUR] [--signal NAME] [--stall DUR] [--input FILE|-] [--report FILE] [--cwd DIR] [--env K=V]... -- CMD [ARGS...]';

const helpText = `Run one command with a deadline, tear down everything it started, exit like GNU timeout.

Usage:
  ${usageLine}

Options:
  --deadline DUR   end the command after DUR (500ms, 30s, 10m, 2h); 0 or absent: none
  --grace DUR      how long a signalled tree, or the output of an exited one, may take
                   before KILL / before the pipes are abandoned; default 5s
  --signal NAME    the first signal at the deadline (TERM, INT, HUP, ...); default TERM
  --stall DUR      no stdout for DUR ends the command like a deadline; 0: none
  --input FILE|-   write FILE to the command's stdin through a pipe; '-' (the default)
                   passes settle's own stdin
  --report FILE    write one JSON object (reason, exit codes, signal, duration, teardown,
                   first transport error, bytes in/out) atomically to FILE
  --cwd DIR        run the command in DIR
  --env K=V        set a variable for the command (repeatable)
  -h, --help       show this help

stdout and stderr pass through byte for byte. SIGINT/SIGTERM/SIGHUP to settle tear the
command's tree down and exit 128+N.

Exit codes:
  N        the command's own exit code
  124      the deadline expired, or the command stalled
  125      settle itself failed: usage error, missing --cwd or --input, report not
           written, or a teardown it could not verify (outranks 124)
  126      the command is not executable
  127      the command was not found
  128+N    the command was killed by signal N (or settle was, and tore it down)
`;

interface Invocation {
  command: string[];
  deadlineMs?: number;
  graceMs?: number;
  stallMs?: number;
  killSignal?: NodeJS.Signals;
  input?: string;
  report?: string;
  cwd?: string;
  env: Record<string, string>;
}

class UsageError extends Error {
  override name = 'UsageError';
}

const knownOptions = new Set(['--', 'deadline', 'grace', 'signal', 'stall', 'input', 'report', 'cwd', 'env', 'h', 'help']);

// Parses argv. The common `settle -- cmd` skips cac entirely (start-up time); anything
// with options goes through cac.
async function parse(argv: string[]): Promise<Invocation | 'help'> {
  if (argv[0] === '--') {
    if (argv.length < 2) throw new UsageError('no command after --');
    return { command: argv.slice(1), env: {} };
  }
  const { cac } = await import('cac');
  const cli = cac('settle');
  cli.option('--deadline <dur>', 'deadline');
  cli.option('--grace <dur>', 'grace');
  cli.option('--signal <name>', 'first signal');
  cli.option('--stall <dur>', 'stall');
  cli.option('--input <file>', 'input');
  cli.option('--report <file>', 'report');
  cli.option('--cwd <dir>', 'cwd');
  cli.option('--env <kv>', 'env', { type: [String] });
  cli.option('-h, --help', 'help');
  // mri reads a lone `-` as "no value", so `--input -` (settle's stdin) becomes `--input=-`.
  const cut = argv.indexOf('--');
  const own = cut < 0 ? argv : argv.slice(0, cut);
  const rewritten: string[] = [];
  for (let i = 0; i < own.length; i++) {
    if (own[i] === '--input' && own[i + 1] === '-') {
      rewritten.push('--input=-');
      i++;
    } else rewritten.push(own[i]!);
  }
  const parsed = cli.parse(['node', 'settle', ...rewritten, ...(cut < 0 ? [] : argv.slice(cut))], { run: false });
  const o = parsed.options as Record<string, unknown>;
  if (o.help || o.h) return 'help';
  for (const key of Object.keys(o)) {
    if (!knownOptions.has(key)) throw new UsageError(`unknown option --${key}`);
  }
  if (parsed.args.length > 0) throw new UsageError(`put -- before the command: settle [options] -- ${parsed.args.join(' ')}`);
  const command = (o['--'] as string[] | undefined) ?? [];
  if (command.length === 0) throw new UsageError('no command: settle [options] -- CMD [ARGS...]');
  const invocation: Invocation = { command, env: {} };
  const duration = (name: string): number | undefined => {
    const value = o[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' && typeof value !== 'number') throw new UsageError(`--${name} takes one duration`);
    const ms = parseDuration(String(value));
    if (ms === undefined) throw new UsageError(`--${name} ${String(value)} is not a duration (500ms, 30s, 10m, 2h)`);
    return ms;
  };
  const text = (name: string): string | undefined => {
    const value = o[name];
    if (value === undefined) return undefined;
    if (typeof value === 'boolean' || Array.isArray(value) || String(value) === '') throw new UsageError(`--${name} needs one value`);
    return String(value);
  };
  const deadlineMs = duration('deadline');
  const graceMs = duration('grace');
  const stallMs = duration('stall');
  // As in GNU timeout, a zero deadline or stall means none.
  if (deadlineMs) invocation.deadlineMs = deadlineMs;
  if (graceMs !== undefined) invocation.graceMs = graceMs;
  if (stallMs) invocation.stallMs = stallMs;
  const signal = text('signal');
  if (signal !== undefined) invocation.killSignal = signalNamed(signal);
  const input = text('input');
  if (input !== undefined) invocation.input = input;
  const report = text('report');
  if (report !== undefined) invocation.report = report;
  const cwd = text('cwd');
  if (cwd !== undefined) invocation.cwd = cwd;
  for (const pair of (o.env as unknown[] | undefined) ?? []) {
    const at = String(pair).indexOf('=');
    if (at <= 0) throw new UsageError(`--env ${String(pair)} is not K=V`);
    invocation.env[String(pair).slice(0, at)] = String(pair).slice(at + 1);
  }
  return invocation;
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

// The one line settle prints about an outcome that is not the command's own doing.
function outcomeLine(inv: Invocation, e: Execution): string | undefined {
  const t = e.teardown;
  const tail = t.result === 'none' ? '' : `; teardown ${t.result} (signalled ${t.signalled.join(' ') || 'none'})`;
  if (t.result === 'failed') return `settle: teardown_failed: pids ${t.survivors.join(' ')} survived SIGKILL`;
  switch (e.reason) {
    case 'exited':
    case 'signaled':
      return undefined;
    case 'timed_out':
      return `settle: timed_out: ${inv.command[0]} still running at the --deadline of ${formatDuration(e.deadlineMs ?? 0)}${tail}`;
    case 'stalled':
      return `settle: stalled: ${inv.command[0]} wrote no stdout for ${formatDuration(e.stallMs ?? 0)}${tail}`;
    case 'interrupted':
      return `settle: interrupted: ${e.interruptSignal ?? 'abort'} received${tail}`;
    case 'spawn_failed': {
      const hint =
        e.error?.code === 'ENOENT' && e.error.where === 'spawn'
          ? '\n  hint: not found; check the name and PATH'
          : e.error?.code === 'EACCES' && e.error.where === 'spawn'
            ? '\n  hint: not executable; chmod +x it or run it through its interpreter'
            : '';
      return `settle: spawn_failed: ${e.error?.message ?? 'the command could not start'}${hint}`;
    }
    default:
      return unreachable(e.reason);
  }
}

export async function main(argv: string[]): Promise<number> {
  let inv: Invocation | 'help';
  try {
    inv = await parse(argv);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof Error && error.name === 'CACError')) {
      process.stderr.write(`settle: usage: ${error.message}\n  hint: ${usageLine}\n`);
      return 125;
    }
    throw error;
  }
  if (inv === 'help') {
    process.stdout.write(helpText);
    return 0;
  }
  if (inv.report !== undefined && !isDirectory(dirname(resolve(inv.report)))) {
    process.stderr.write(`settle: report_unwritable: --report ${inv.report}: directory ${dirname(resolve(inv.report))} does not exist\n`);
    return 125;
  }

  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal);
  const forwarded: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of forwarded) process.on(s, onSignal);
  const spec: SettleSpec = {
    argv: inv.command,
    env: inv.env,
    input: inv.input === undefined || inv.input === '-' ? 'inherit' : { file: inv.input },
    stderr: 'inherit',
    signal: controller.signal,
    ...(inv.cwd !== undefined ? { cwd: inv.cwd } : {}),
    ...(inv.deadlineMs !== undefined ? { deadlineMs: inv.deadlineMs } : {}),
    ...(inv.graceMs !== undefined ? { graceMs: inv.graceMs } : {}),
    ...(inv.stallMs !== undefined ? { stallMs: inv.stallMs } : {}),
    ...(inv.killSignal !== undefined ? { killSignal: inv.killSignal } : {}),
  };
  // A broken stdout surfaces here only when the child wrote more, and that write would have
  // earned it SIGPIPE on a real pipe; our pipe to it is a socket, so we deliver the SIGPIPE.
  let child: ProcessIdentity | undefined;
  spec.onEvent = (event) => {
    if (event.type === 'spawned') child = processIdentity(event.pid);
  };
  // process.stdout is set up (a pipe or terminal handle) only once the child has written:
  // a command that prints nothing never pays for it at start-up.
  let out: Writable | undefined;
  const consume = async (stdout: Readable) => {
    if (!(await firstOutput(stdout))) return;
    out = process.stdout;
    if ((await passThrough(stdout, out)) === 'broken' && child && isAlive(child)) process.kill(child.pid, 'SIGPIPE');
  };
  const startedAt = Date.now();
  let execution: Execution;
  try {
    ({ execution } = await stream(spec, undefined, consume));
  } finally {
    for (const s of forwarded) process.off(s, onSignal);
  }
  let code = exitCodeFor(execution);
  const line = outcomeLine(inv, execution);
  if (line) process.stderr.write(`${line}\n`);
  if (inv.report !== undefined) {
    try {
      await writeReport(inv.report, reportOf(inv.command, execution, code));
    } catch (error) {
      process.stderr.write(`settle: report_unwritable: --report ${inv.report}: ${(error as Error).message}\n`);
      code = 125;
    }
  }
  // What we already wrote waits for the reader, as it would in a pipe: at its pace after a
  // normal exit (until the deadline, if any), for `grace` after a teardown. Pending writes
  // hold the event loop open, so past that the only way out is to exit with the code decided.
  const normal = execution.reason === 'exited' || execution.reason === 'signaled';
  const deadlineLeft = inv.deadlineMs !== undefined ? startedAt + inv.deadlineMs - Date.now() : Infinity;
  const flushMs = normal ? Math.max(deadlineLeft, execution.graceMs) : execution.graceMs;
  if (out && !(await flushStdout(out, flushMs))) process.exit(code);
  return code;
}

function isDirectory(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory();
  } catch {
    return false;
  }
}

// Gives a slow reader up to `ms` (Infinity: as long as it takes) to take what we already
// wrote; false when it did not. Polls writableLength: 'drain' only fires after a write that
// returned false, and the timer also keeps the event loop alive while we wait.
async function flushStdout(out: Writable, ms: number): Promise<boolean> {
  const flushed = () => out.writableLength === 0 || out.destroyed;
  if (flushed()) return true;
  const giveUpAt = Date.now() + ms;
  return new Promise<boolean>((resolve) => {
    const timer = setInterval(() => {
      if (flushed()) finish(true);
      else if (Date.now() >= giveUpAt) finish(false);
    }, 20);
    const finish = (result: boolean) => {
      clearInterval(timer);
      out.off('error', onError);
      resolve(result);
    };
    const onError = () => finish(true);
    out.once('error', onError);
  });
}

// Resolves true once the child's stdout has bytes to pass on, false when it ends or is
// destroyed without any. ('readable' fires for data or for the end, never for neither.)
function firstOutput(stdout: Readable): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const answer = (has: boolean) => {
      stdout.off('readable', onReadable);
      stdout.off('close', onClose);
      if (!has) stdout.resume(); // let an empty stream reach 'end'
      resolve(has);
    };
    const onReadable = () => answer(stdout.readableLength > 0);
    const onClose = () => answer(false);
    stdout.on('readable', onReadable);
    stdout.on('close', onClose);
  });
}
