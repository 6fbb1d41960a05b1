import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { newRunId, readHeader } from '@runplan/journal';
import { nearestExisting } from './dir-check.js';

export { newRunId };

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

/**
 * Run ids are template identifiers, `20261129T075500Z-4f2a` (journal's `newRunId`). They
 * name a run; they do not order it: two runs started in the same second differ only in
 * their random suffix. A run's place in its slug's history is its start order (below).
 */
/** A run's id: its start second and 32 random bits (16 before this format, still read). */
export const RUN_ID_PATTERN = /^\d{8}T\d{6}Z-[0-9a-f]{4}(?:[0-9a-f]{4})?$/;

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

// `20261129T075500Z`: the `run.started_at` spelling.
export function compactUtc(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

// Creates a directory (and parents) and makes the leaf mode 0700 whatever the umask.
// Synchronous calls (microseconds each, no fsync): each through the thread pool cost a
// round trip of the event loop, and an attempt's evidence directory is made per attempt.
export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdirs(path, 0o700);
  chmodSync(path, 0o700);
}

// mkdir -p that throws the real cause: Node's recursive mkdir says ENOENT whenever a missing
// parent cannot be made (a read-only file system, EROFS; no permission, EACCES), so on ENOENT
// the outermost missing directory is made alone, which fails with the real errno.
async function mkdirs(path: string, mode: number): Promise<void> {
  try {
    mkdirSync(path, { recursive: true, mode });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    const found = await nearestExisting(path);
    if ('error' in found || found.missing === undefined) throw e;
    mkdirSync(found.missing, { mode });
    // Made after all (a parent came back meanwhile): once more, and its error is the answer.
    mkdirSync(path, { recursive: true, mode });
  }
}

/**
 * Where a run stands in its slug's history. `startOrder` is a counter taken under the slug
 * lock (one more than any run the slug holds) and written into the journal's header, the
 * first record of every run, so even a run that crashed before run-started has one.
 * Journals written before it existed have none: they all started before any run that has
 * one, and among themselves fall back to when the header was written (ms), then the name.
 */
export interface RunStart {
  runId: string;
  startOrder: number | null;
  /** The header record's ts; null when the journal has no readable header. */
  createdAt: string | null;
}

/** The journal header field that holds a run's start order. */
export const START_ORDER_FIELD = 'startOrder';

// The start order a header carries, or null (older journals, or not a positive integer).
export function headerStartOrder(header: Record<string, unknown> | undefined): number | null {
  const value = header?.[START_ORDER_FIELD];
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

// Oldest first: runs without a start order, by creation time then name; then the rest by start order.
export function compareRunStarts(a: RunStart, b: RunStart): number {
  if ((a.startOrder === null) !== (b.startOrder === null)) return a.startOrder === null ? -1 : 1;
  if (a.startOrder !== null && b.startOrder !== null && a.startOrder !== b.startOrder) return a.startOrder - b.startOrder;
  const at = a.createdAt ?? '';
  const bt = b.createdAt ?? '';
  if (at !== bt) return at < bt ? -1 : 1;
  return a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0;
}

// The start order the next run of a slug takes: one more than any the slug holds.
export function nextStartOrder(runs: readonly RunStart[]): number {
  return runs.reduce((high, run) => Math.max(high, run.startOrder ?? 0), 0) + 1;
}

// The names of a slug's run dirs that hold a journal (entries that are not run dirs are ignored), unordered.
// A journal that is not a regular file (a directory, a dangling or looping symlink, a FIFO)
// counts, and so does a missing one when the run's evidence shows an attempt started: their
// reads fail and the run is corrupt (refused; --fresh sets it aside). Passed over, a new run
// started from the base as if the slug had no state, moving runplan/<slug> off the
// crashed run's checkpoints.
export async function runDirNames(slug: SlugPaths): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(slug.dir);
  } catch {
    return [];
  }
  // One stat per candidate, all in flight at once (a slug with 100 runs waited on 100 in a row).
  const held = await Promise.all(
    names
      .filter((name) => RUN_ID_PATTERN.test(name))
      .map(async (name) => {
        try {
          await lstat(join(slug.dir, name, 'journal.jsonl'));
          return name;
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          // A file named like a run id is no run dir.
          if (code === 'ENOTDIR') return undefined;
          if (code !== 'ENOENT') return name;
          // A run dir without a journal started nothing (plan.json is written before it), unless an attempt's evidence is there.
          const evidence = await readdir(join(slug.dir, name, 'evidence')).catch(() => []);
          return evidence.length > 0 ? name : undefined;
        }
      }),
  );
  return held.filter((name): name is string => name !== undefined);
}

// A slug's runs in start order, oldest first; each journal's header line is all that is read
// (every header read at once: the order comes from the sort, not from the reads).
export async function listRuns(slug: SlugPaths): Promise<RunStart[]> {
  const runs = await Promise.all(
    (await runDirNames(slug)).map(async (runId): Promise<RunStart> => {
      const read = await readHeader(join(slug.dir, runId, 'journal.jsonl')).catch(() => undefined);
      return { runId, startOrder: headerStartOrder(read?.header), createdAt: read?.ts ?? null };
    }),
  );
  return runs.sort(compareRunStarts);
}

// The logical run ids of a slug in start order, oldest first.
export async function listRunIds(slug: SlugPaths): Promise<string[]> {
  return (await listRuns(slug)).map((run) => run.runId);
}

// The slugs that have state under a state root, sorted (not `.plan-cache`: a slug never starts with a dot).
export async function listSlugs(stateRoot: string): Promise<string[]> {
  try {
    const entries = await readdir(stateRoot, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

// Bytes used by a directory tree (symlinks counted as themselves, never followed: lstat, and
// readdir's entry types, which do not follow either, so a link to a dir is never walked).
//
// Synchronous on purpose: `runplan status` walks every run's evidence dirs (a slug with 100
// runs of 20 tasks holds ~2 000 directories), and each fs.promises call is a thread-pool
// round trip — the async walk took ~110 ms there (~400 ms one await at a time), this one
// ~35 ms. `runplan status` counts with find(1) first (host/disk-count.ts): this walk is what
// counts when find cannot, with nothing else in flight.
export async function diskUsage(path: string): Promise<number> {
  let total = 0;
  const stack = [path];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    // The names come from readdir (no `/` in them): a join would only normalize the path again.
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    for (const entry of entries) {
      const full = prefix + entry.name;
      if (entry.isDirectory()) stack.push(full);
      else {
        try {
          total += lstatSync(full).size;
        } catch {
          // Gone while we looked.
        }
      }
    }
  }
  return total;
}
