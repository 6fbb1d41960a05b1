import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { binPath, shFixture } from '@runplan/test-fixtures';
import { findOwned } from '../src/owned.js';
import { realProc } from '../src/procfs.js';
import { processIdentity, readProcStat } from '../src/index.js';

export const sh = shFixture;
export const settleBin = binPath('settle');

// The pids a fixture printed, one per line.
export function pidsIn(output: Buffer | string): number[] {
  return String(output)
    .split('\n')
    .filter((line) => /^\d+$/.test(line.trim()))
    .map(Number);
}

// Whether a pid names a live process (not gone, not a zombie) — read from /proc, never kill -0.
export function alive(pid: number): boolean {
  return processIdentity(pid) !== undefined;
}

// Whether our direct child was reaped: its pid is gone from /proc (not even a zombie).
export function reaped(pid: number | undefined): boolean {
  return pid !== undefined && readProcStat(pid)?.state !== 'Z' && processIdentity(pid) === undefined;
}

// Live processes still carrying a settle tag.
export function taggedAlive(tag: string): number[] {
  return findOwned({ tags: [tag] }, realProc).map((p) => p.pid);
}

// Ends a process we started in a test, if a test failed before settle could.
export function killQuietly(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export interface LiveBin {
  child: ChildProcess;
  /** Resolves with the first line the bin prints on stdout. */
  firstLine: Promise<string>;
  /** Resolves once the bin exits, with everything it printed after the first line. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/**
 * The argv that runs `argv` as a shell runs a job: in a process group of its own (perl's
 * setpgrp, then exec: the same pid) whose parent, the test, is in another group of the same
 * session. Such a group is never orphaned, so a SIGTSTP to it is honoured wherever the test
 * itself runs (settle ignores Ctrl-Z in an orphaned group, as the kernel does: setsid, cron).
 */
export function asJob(argv: string[]): string[] {
  return ['perl', '-e', 'setpgrp(0, 0) or die "setpgrp: $!"; exec { $ARGV[0] } @ARGV or die "exec: $!"', ...argv];
}

// Starts the settle bin and exposes its first stdout line (the fixture's pid) as an event.
// `job`: settle runs as a job of its own process group (see asJob).
export function startSettle(args: string[], input?: string, opts: { job?: boolean } = {}): LiveBin {
  const argv = [process.execPath, settleBin, ...args];
  const [file, ...rest] = opts.job === true ? asJob(argv) : argv;
  const child = spawn(file!, rest, { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => {});
  if (input === undefined) child.stdin.end();
  else child.stdin.end(input);
  const lines = createInterface({ input: child.stdout });
  const firstLine = new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', () => reject(new Error('settle exited before printing a line')));
  });
  firstLine.catch(() => {});
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, firstLine, exit };
}
