import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/**
 * Where a slug's state lives: `<state>/<slug>/` (0700) holds `coordinator.json` (the slug
 * lock's identity file), `work/` (default attempt dirs) and one directory per logical run,
 * `<run-id>/journal.jsonl`, `plan.json`, `evidence/<task>.<attempt>/`.
 */
export interface SlugPaths {
  stateRoot: string;
  slug: string;
  dir: string;
  identity: string;
  work: string;
}

export interface RunPaths {
  runId: string;
  dir: string;
  journal: string;
  planCopy: string;
  evidence: string;
}

/** Run ids sort by time and are template identifiers: `20261129T075500Z-4f2a`. */
export const RUN_ID_PATTERN = /^\d{8}T\d{6}Z-[0-9a-f]{4}$/;

// The state root: `--state-dir` when given, else `<git common dir>/runplan`.
export function stateRootFor(gitCommonDir: string, override?: string): string {
  return override !== undefined ? resolve(override) : join(gitCommonDir, 'runplan');
}

export function slugPaths(stateRoot: string, slug: string): SlugPaths {
  const dir = join(stateRoot, slug);
  return { stateRoot, slug, dir, identity: join(dir, 'coordinator.json'), work: join(dir, 'work') };
}

export function runPaths(slug: SlugPaths, runId: string): RunPaths {
  const dir = join(slug.dir, runId);
  return { runId, dir, journal: join(dir, 'journal.jsonl'), planCopy: join(dir, 'plan.json'), evidence: join(dir, 'evidence') };
}

// The evidence directory of one attempt.
export function attemptEvidenceDir(run: RunPaths, taskId: string, attempt: number): string {
  return join(run.evidence, `${taskId}.${attempt}`);
}

// A new sortable logical run id for the given time (UTC, second precision, 4 hex of salt).
export function newRunId(now: Date = new Date()): string {
  return `${compactUtc(now)}-${randomBytes(2).toString('hex')}`;
}

// `20261129T075500Z`: the `run.started_at` spelling.
export function compactUtc(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
}

// Creates a directory (and parents) and makes the leaf mode 0700 whatever the umask.
export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  await chmod(path, 0o700);
}

// The logical run ids of a slug, oldest first (entries that are not run dirs are ignored).
export async function listRunIds(slug: SlugPaths): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(slug.dir);
  } catch {
    return [];
  }
  const ids: string[] = [];
  for (const name of names) {
    if (!RUN_ID_PATTERN.test(name)) continue;
    try {
      if ((await stat(join(slug.dir, name, 'journal.jsonl'))).isFile()) ids.push(name);
    } catch {
      // A run dir without a journal started nothing.
    }
  }
  return ids.sort();
}

// The slugs that have state under a state root, sorted.
export async function listSlugs(stateRoot: string): Promise<string[]> {
  try {
    const entries = await readdir(stateRoot, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return [];
  }
}

// Bytes used by a directory tree (symlinks counted as themselves, never followed).
export async function diskUsage(path: string): Promise<number> {
  let total = 0;
  const stack = [path];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else {
        try {
          total += (await stat(full)).size;
        } catch {
          // Gone while we looked.
        }
      }
    }
  }
  return total;
}
