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

// Starts the settle bin and exposes its first stdout line (the fixture's pid) as an event.
export function startSettle(args: string[], input?: string): LiveBin {
  const child = spawn(process.execPath, [settleBin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
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
