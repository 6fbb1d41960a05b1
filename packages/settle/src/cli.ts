import { existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, resolve } from 'node:path';
import { formatDuration, parseCommandLineDuration, unreachable } from '@runplan/common';
import type { Readable, Writable } from 'node:stream';
import type { OwnershipMode } from './cgroup.js';
import { exitCodeFor } from './exit-code.js';
import { isOwnershipMode } from './ownership-choice.js';
import { isAlive, processIdentity, type ProcessIdentity } from './identity.js';
import { passThrough } from './pass-through.js';
import { reportOf, reportText, writeReport } from './report.js';
import { stream } from './stream.js';
import type { Execution, SettleSpec } from './types.js';

const usageLine =
  'settle [--deadline DUR] [--grace DUR] [--kill-after DUR] [--signal NAME] [--stall DUR] [--preserve-status] [--input FILE|-] [--report FILE] [--ownership MODE] [--cgroup-parent DIR] [--cwd DIR] [--env K=V]... -- CMD [ARGS...]';

/** Kept equal to package.json's version by a test (the bundle cannot read package.json cheaply). */
export const settleVersion = '0.1.0';

const helpText = `Run one command with a deadline, tear down everything it started, exit like GNU timeout.

Usage:
  ${usageLine}

Options:
  --deadline DUR   end the command after DUR (500ms, 30s, 10m, 2h, 1d; a bare number is
                   seconds, as in GNU timeout); 0 or absent: none
  --grace DUR      how long a signalled tree, or the output of an exited one, may take
                   before KILL / before the pipes are abandoned; default 5s. It also bounds
                   a pipe still held open after the command exited
  -k, --kill-after DUR
                   the wait between the first signal and KILL alone; default: --grace
  -s, --signal NAME
                   the first signal at the deadline (TERM, INT, HUP, ...); default TERM
  --stall DUR      no stdout for DUR ends the command like a deadline; 0: none
  -p, --preserve-status
                   exit with the command's own status even when it timed out
  --input FILE|-   write FILE to the command's stdin through a pipe; '-' (the default)
                   passes settle's own stdin
  --report FILE    write one JSON object (reason, exit codes, signal, duration, teardown,
                   first transport error, bytes in/out) atomically to FILE
  --ownership MODE how the command's processes are owned: auto (the default: a cgroup v2
                   cgroup of its own when one can be made, else its process group plus
                   an environment tag), cgroup (exit 125 when none can be made), group+tag
  --cgroup-parent DIR
                   the cgroup v2 directory to make the command's cgroup in; default:
                   settle's own cgroup's directory
  --cwd DIR        run the command in DIR
  --env K=V        set a variable for the command (repeatable)
  -h, --help       show this help
  --version        print settle's version

stdout and stderr pass through byte for byte. SIGINT/SIGTERM/SIGHUP to settle tear the
command's tree down and exit 128+N; SIGALRM is a timeout (124). SIGQUIT, SIGUSR1,
SIGUSR2, SIGPIPE, SIGXCPU and SIGXFSZ are passed on to the command's process group and
settle keeps waiting: the command's fate decides the exit code.

Exit codes:
  N        the command's own exit code
  124      the deadline expired, or the command stalled, even when KILL was needed
           (GNU timeout exits 137 then; settle keeps 124 and --report says escalated)
  125      settle itself failed: usage error, missing --cwd or --input, report not
           written, --ownership cgroup without a usable cgroup, or a teardown it
           could not verify (outranks 124)
  126      the command is not executable
  127      the command was not found
  128+N    the command was killed by signal N (or settle was, and tore it down)
`;

interface Invocation {
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

class UsageError extends Error {
  override name = 'UsageError';
}

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
async function parse(argv: string[]): Promise<Invocation | 'help' | 'version'> {
  if (argv[0] === '--') {
    if (argv.length < 2) throw new UsageError('no command after --');
    return { command: argv.slice(1), env: {}, preserveStatus: false };
  }
  const { cac } = await import('cac');
  const cli = cac('settle');
  cli.option('--deadline <dur>', 'deadline');
  cli.option('--grace <dur>', 'grace');
  cli.option('-k, --kill-after <dur>', 'kill after');
  cli.option('-s, --signal <name>', 'first signal');
  cli.option('--stall <dur>', 'stall');
  cli.option('-p, --preserve-status', 'preserve status');
  cli.option('--version', 'version');
  cli.option('--input <file>', 'input');
  cli.option('--report <file>', 'report');
  cli.option('--cwd <dir>', 'cwd');
  cli.option('--ownership <mode>', 'ownership');
  cli.option('--cgroup-parent <dir>', 'cgroup parent');
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
  if (o.version) return 'version';
  for (const key of Object.keys(o)) {
    if (!knownOptions.has(key)) throw new UsageError(`unknown option --${key}`);
  }
  if (parsed.args.length > 0) throw new UsageError(`put -- before the command: settle [options] -- ${parsed.args.join(' ')}`);
  const command = (o['--'] as string[] | undefined) ?? [];
  if (command.length === 0) throw new UsageError('no command: settle [options] -- CMD [ARGS...]');
  const invocation: Invocation = { command, env: {}, preserveStatus: o.preserveStatus === true };
  if (o.preserveStatus !== undefined && typeof o.preserveStatus !== 'boolean') throw new UsageError('--preserve-status takes no value');
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
    if (typeof value === 'boolean' || Array.isArray(value) || String(value) === '') throw new UsageError(`--${flag} needs one value`);
    return String(value);
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
  for (const pair of (o.env as unknown[] | undefined) ?? []) {
    const at = String(pair).indexOf('=');
    if (at <= 0) throw new UsageError(`--env ${String(pair)} is not K=V`);
    invocation.env[String(pair).slice(0, at)] = String(pair).slice(at + 1);
  }
  return invocation;
}

// The text given to `--flag V`, `--flag=V` (or `-k V` for kill-after), the last one if repeated.
function typedValue(own: readonly string[], flag: string): string | undefined {
  const names = flag === 'kill-after' ? ['--kill-after', '-k'] : [`--${flag}`];
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

// The one line settle prints about an outcome that is not the command's own doing.
function outcomeLine(inv: Invocation, e: Execution, alarmed: boolean): string | undefined {
  const t = e.teardown;
  const tail = t.result === 'none' ? '' : `; teardown ${t.result} (signalled ${t.signalled.join(' ') || 'none'})`;
  if (t.result === 'failed') return `settle: teardown_failed: pids ${t.survivors.join(' ')} survived SIGKILL`;
  switch (e.reason) {
    case 'exited':
    case 'signaled':
      return undefined;
    case 'timed_out':
      if (alarmed) return `settle: timed_out: SIGALRM received${tail}`;
      return `settle: timed_out: ${inv.command[0]} still running at the --deadline of ${formatDuration(e.deadlineMs ?? 0)}${tail}`;
    case 'stalled':
      return `settle: stalled: ${inv.command[0]} wrote no stdout for ${formatDuration(e.stallMs ?? 0)}${tail}`;
    case 'interrupted':
      return `settle: interrupted: ${e.interruptSignal ?? 'abort'} received${tail}`;
    case 'spawn_failed': {
      if (e.error?.where === 'cgroup') {
        return `settle: ${e.error.code}: ${e.error.message}\n  hint: --ownership auto falls back to the process group and tag`;
      }
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

// Signals to settle that tear the command's tree down; settle then exits 128+N (SIGALRM: 124, a timeout).
const teardownSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGALRM'];
// Signals to settle passed on to the command's process group while settle keeps waiting, as
// GNU timeout does: the command's fate decides the exit code. SEGV, BUS, FPE and ILL are not
// safe to handle in Node; PROF and VTALRM belong to the profiler (README, Limits).
const relayedSignals: NodeJS.Signals[] = ['SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGPIPE', 'SIGXCPU', 'SIGXFSZ'];

// Writes to one of settle's own streams. A closed reader (`settle … 2>&1 | head -1`) must
// never change settle's exit code or lose its report, so the write's EPIPE is dropped.
function say(stream: NodeJS.WriteStream, text: string): void {
  if (stream.listenerCount('error') === 0) stream.on('error', () => {});
  stream.write(text);
}

export async function main(argv: string[]): Promise<number> {
  let inv: Invocation | 'help' | 'version';
  try {
    inv = await parse(argv);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof Error && error.name === 'CACError')) {
      say(process.stderr, `settle: usage: ${error.message}\n  hint: ${usageLine}\n`);
      return 125;
    }
    throw error;
  }
  if (inv === 'help' || inv === 'version') {
    say(process.stdout, inv === 'help' ? helpText : `settle ${settleVersion}\n`);
    return 0;
  }
  if (inv.report !== undefined && !isDirectory(dirname(resolve(inv.report)))) {
    say(process.stderr, `settle: report_unwritable: --report ${inv.report}: directory ${dirname(resolve(inv.report))} does not exist\n`);
    return 125;
  }

  const controller = new AbortController();
  let child: ProcessIdentity | undefined;
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal);
  // Relayed only while our child is the leader we recorded: the group is never a stranger's.
  const onRelayed = (signal: NodeJS.Signals) => {
    if (!child || !isAlive(child)) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone
    }
  };
  // With --input FILE settle writes the command's stdin itself, and the SIGPIPE its own
  // EPIPE raises there looks like one sent to settle: SIGPIPE stays ignored then (Limits).
  const feedsStdin = inv.input !== undefined && inv.input !== '-';
  for (const s of teardownSignals) process.on(s, onSignal);
  for (const s of relayedSignals) if (!(feedsStdin && s === 'SIGPIPE')) process.on(s, onRelayed);
  const spec: SettleSpec = {
    argv: inv.command,
    env: inv.env,
    input: inv.input === undefined || inv.input === '-' ? 'inherit' : { file: inv.input },
    stderr: 'inherit',
    signal: controller.signal,
    ...(inv.cwd !== undefined ? { cwd: inv.cwd } : {}),
    ...(inv.ownership !== undefined ? { ownership: inv.ownership } : {}),
    ...(inv.cgroupParent !== undefined ? { cgroupParent: inv.cgroupParent } : {}),
    ...(inv.deadlineMs !== undefined ? { deadlineMs: inv.deadlineMs } : {}),
    ...(inv.graceMs !== undefined ? { graceMs: inv.graceMs } : {}),
    ...(inv.killAfterMs !== undefined ? { killAfterMs: inv.killAfterMs } : {}),
    ...(inv.stallMs !== undefined ? { stallMs: inv.stallMs } : {}),
    ...(inv.killSignal !== undefined ? { killSignal: inv.killSignal } : {}),
  };
  // A broken stdout surfaces here only when the child wrote more, and that write would have
  // earned it SIGPIPE on a real pipe; our pipe to it is a socket, so we deliver the SIGPIPE.
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
    for (const s of teardownSignals) process.off(s, onSignal);
    // The relay stays: removing the last SIGPIPE listener restores SIGPIPE's default action
    // (not the ignore Node starts with), and settle's own write to a closed stderr would kill it.
  }
  const alarmed = execution.reason === 'interrupted' && execution.interruptSignal === 'SIGALRM';
  if (alarmed) execution = alarmAsTimeout(execution);
  let code = inv.preserveStatus ? preservedStatus(execution) : exitCodeFor(execution);
  const line = outcomeLine(inv, execution, alarmed);
  if (line) say(process.stderr, `${line}\n`);
  const ownStream = inv.report === undefined ? undefined : settleStreamNamed(inv.report);
  if (ownStream) {
    // settle's own stdout or stderr (maybe a socket, which cannot be opened by name): the
    // report goes after what the command wrote there, through the same stream.
    if (ownStream.destroyed || ownStream.writableEnded) {
      say(process.stderr, `settle: report_unwritable: --report ${inv.report}: the stream is closed\n`);
      code = 125;
    } else {
      say(ownStream, reportText(reportOf(inv.command, execution, code)));
      if (ownStream === process.stdout) out = ownStream;
    }
  } else if (inv.report !== undefined) {
    try {
      await writeReport(inv.report, reportOf(inv.command, execution, code));
    } catch (error) {
      say(process.stderr, `settle: report_unwritable: --report ${inv.report}: ${(error as Error).message}\n`);
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

// SIGALRM to settle is a timeout, as in GNU timeout: the teardown it caused reads as timed_out.
function alarmAsTimeout(e: Execution): Execution {
  const { interruptSignal: _alarm, ...rest } = e;
  return { ...rest, reason: 'timed_out' };
}

// --preserve-status: the command's own status even when it timed out or stalled (128+N when
// a signal ended it); settle's own failures keep their codes.
function preservedStatus(e: Execution): number {
  if ((e.reason !== 'timed_out' && e.reason !== 'stalled') || e.teardown.result === 'failed') return exitCodeFor(e);
  if (e.signal) return exitCodeFor({ ...e, reason: 'signaled' });
  return e.exitCode ?? 125;
}

// process.stdout for `/dev/stdout`, `/dev/fd/1` or `/proc/self/fd/1` (stderr for 2); undefined for any other path.
function settleStreamNamed(path: string): NodeJS.WriteStream | undefined {
  const fd = /^\/dev\/std(out|err)$/.exec(path)?.[1] ?? /^\/(?:dev|proc\/self)\/fd\/([12])$/.exec(path)?.[1];
  if (fd === 'out' || fd === '1') return process.stdout;
  if (fd === 'err' || fd === '2') return process.stderr;
  return undefined;
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
