import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { binPath, runBin, type BinResult } from '@runplan/test-fixtures';
import { MARK_FILE, type RunDirMark } from '../src/index.js';

// Makes `dir` (if needed) and writes a mark into it by hand, with a chosen creation time.
export function plantMark(dir: string, mark: Partial<RunDirMark> & { template: string; runId: string; createdAt: string }): void {
  mkdirSync(dir, { recursive: true });
  const full: RunDirMark = {
    creator: { pid: 1, startTime: 1, bootId: 'test-boot', host: 'test-host' },
    kind: 'run',
    ...mark,
  };
  writeFileSync(join(dir, MARK_FILE), JSON.stringify(full));
}

// An ISO time `minutes` after a fixed origin, so tests can order marks without sleeping.
export function at(minutes: number): string {
  return new Date(Date.UTC(2026, 10, 29, 7, 0) + minutes * 60_000).toISOString();
}

// Runs the real workdir bin.
export function workdir(args: string[], env?: NodeJS.ProcessEnv): Promise<BinResult> {
  return runBin(binPath('workdir'), args, env === undefined ? {} : { env: { ...process.env, ...env } });
}

// Runs the real workdir bin in a child whose umask is `mask` (see umask-child.ts).
export function workdirWithUmask(mask: number, args: string[]): Promise<BinResult> {
  return runBin(join(import.meta.dirname, 'umask-child.js'), [mask.toString(8), binPath('workdir'), ...args]);
}

// Asserts a bin failed with `code` and exactly one error line (plus an optional hint) naming `reason`.
export function stderrLines(result: BinResult): string[] {
  return result.stderr.split('\n').filter((line) => line !== '');
}
