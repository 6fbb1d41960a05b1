import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDirectory, writeFileDurable } from '@runplan/common';
import { processIdentity, type ProcessIdentity } from '@runplan/settle';

/** The mark's file name inside a run directory or datadir. */
export const MARK_FILE = '.harness-run-dir';

/**
 * Our claim that we created a directory for a run. Pruning removes only marked
 * directories, so anything else (a pre-existing tree, another tool's output) survives.
 */
export interface RunDirMark {
  /** The template the directory was rendered from, as given. */
  template: string;
  runId: string;
  /** ISO 8601 UTC; pruning removes oldest first by this. */
  createdAt: string;
  /** The process that created the directory (pid + start time + boot + host). */
  creator: ProcessIdentity;
  /** `run` (a per-run workdir) or `datadir` (`<workdir>/.harness-run/<run.id>`); absent means `run`. */
  kind?: 'run' | 'datadir';
}

export type MarkRead = { state: 'marked'; mark: RunDirMark } | { state: 'unmarked' } | { state: 'bad_mark'; message: string };

// Reads a directory's mark without following a symlinked mark file.
export async function readMark(dir: string): Promise<MarkRead> {
  const path = join(dir, MARK_FILE);
  try {
    const info = lstatSync(path);
    if (!info.isFile()) return { state: 'bad_mark', message: `${path} is not a regular file` };
    if (info.size > 64 * 1024) return { state: 'bad_mark', message: `${path} is too large to be a mark` };
    const mark = parseMark(readFileSync(path, 'utf8'));
    return mark ? { state: 'marked', mark } : { state: 'bad_mark', message: `${path} is not a run-dir mark` };
  } catch (error) {
    if (isCode(error, 'ENOENT')) return { state: 'unmarked' };
    return { state: 'bad_mark', message: `${path}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

// Validates mark JSON; undefined when any field is missing or mistyped.
export function parseMark(text: string): RunDirMark | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object') return undefined;
  const m = value as Record<string, unknown>;
  const creator = m.creator as Record<string, unknown> | null | undefined;
  if (typeof m.template !== 'string' || typeof m.runId !== 'string' || typeof m.createdAt !== 'string') return undefined;
  if (Number.isNaN(Date.parse(m.createdAt))) return undefined;
  if (!creator || typeof creator !== 'object') return undefined;
  if (typeof creator.pid !== 'number' || typeof creator.startTime !== 'number') return undefined;
  if (typeof creator.bootId !== 'string' || typeof creator.host !== 'string') return undefined;
  if (m.kind !== undefined && m.kind !== 'run' && m.kind !== 'datadir') return undefined;
  const mark: RunDirMark = {
    template: m.template,
    runId: m.runId,
    createdAt: m.createdAt,
    creator: { pid: creator.pid, startTime: creator.startTime, bootId: creator.bootId, host: creator.host },
  };
  if (m.kind !== undefined) mark.kind = m.kind;
  return mark;
}

// The mark this process writes now.
export function newMark(template: string, runId: string, kind: 'run' | 'datadir', now: Date): RunDirMark {
  const creator = processIdentity(process.pid) ?? { pid: process.pid, startTime: 0, bootId: 'unknown', host: 'unknown' };
  return { template, runId, createdAt: now.toISOString(), creator, kind };
}

// Writes the mark whole or not at all, then makes its directory entry durable.
export async function writeMark(dir: string, mark: RunDirMark): Promise<void> {
  await writeFileDurable(join(dir, MARK_FILE), `${JSON.stringify(mark)}\n`, { mode: 0o600 });
  await fsyncDirectory(dir);
}

export function isCode(error: unknown, code: string): boolean {
  return !!error && typeof error === 'object' && 'code' in error && error.code === code;
}
