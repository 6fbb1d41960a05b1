import { chmodSync, lstatSync, mkdirSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { err, fsyncDirectory, ok, type Result } from '@runplan/common';
import { errorCode, type WorkdirError } from './errors.js';
import { isCode, newMark } from './mark.js';
import { canonicalTemplate } from './path-template.js';
import { applyRetention, isRetainCount } from './retention.js';
import { createMarkedDir, runIdOf } from './run-dir.js';
import { IDENTIFIER_PATTERN } from './variables.js';

/** The directory inside a workdir that holds one datadir per run. */
export const DATADIR_PARENT = '.harness-run';
/** What a datadir's mark records as its template. */
export const DATADIR_TEMPLATE = `${DATADIR_PARENT}/{{run.id}}`;

export interface DataDirOptions {
  /**
   * Keep at most this many datadirs in the workdir (>= 1), counting the one just created:
   * the oldest of the others that are ours are removed. Runs in flight always survive.
   */
  keepRuns?: number;
  /** Datadirs of other runs in flight (paths). */
  inFlight?: string[];
  /** Judge and report what keepRuns would remove, remove nothing. */
  dryRun?: boolean;
  /** The mark's creation time; default now. */
  now?: Date;
}

export interface CreatedDataDir {
  path: string;
  reused: boolean;
  /** Older datadirs removed by keepRuns, oldest first. */
  pruned: string[];
  /** Removals keepRuns attempted that failed. */
  pruneFailed: Array<{ path: string; message: string }>;
}

/**
 * Creates `<workdir>/.harness-run/<runId>`, 0700 and marked like a run directory (reused when
 * it is this run's), then bounds the workdir's datadirs by keepRuns with the same rules as prune.
 * The workdir itself must exist: a typo never creates a tree.
 */
export async function createDataDir(
  workdir: string,
  runId: string,
  opts: DataDirOptions = {},
): Promise<Result<CreatedDataDir, WorkdirError>> {
  const id = runIdOf({ 'run.id': runId });
  if (!id.ok) return id;
  if (opts.keepRuns !== undefined && !(isRetainCount(opts.keepRuns) && opts.keepRuns >= 1)) {
    return err({ reason: 'bad_retain', message: `keep-runs must be an integer >= 1, got ${String(opts.keepRuns)}` });
  }
  if (!isAbsolute(workdir)) {
    return err({ reason: 'not_absolute', path: workdir, message: `workdir ${JSON.stringify(workdir)} is not an absolute path` });
  }
  try {
    if (!statSync(workdir).isDirectory()) {
      return err({ reason: 'workdir_missing', path: workdir, message: `workdir ${workdir} is not a directory` });
    }
  } catch (error) {
    return err({
      reason: 'workdir_missing',
      path: workdir,
      message: `workdir ${workdir} does not exist (${errorCode(error)})`,
      hint: 'create the workdir first (workdir create)',
    });
  }
  const parent = join(workdir, DATADIR_PARENT);
  const made = await ensureDataDirParent(parent, workdir);
  if (!made.ok) return made;
  const leaf = join(parent, id.value);
  const created = await createMarkedDir(leaf, newMark(DATADIR_TEMPLATE, id.value, 'datadir', opts.now ?? new Date()));
  if (!created.ok) return created;
  const result: CreatedDataDir = { ...created.value, pruned: [], pruneFailed: [] };
  if (opts.keepRuns === undefined) return ok(result);
  const expected = canonicalTemplate(DATADIR_TEMPLATE);
  const retention = await applyRetention({
    holding: parent,
    shape: new RegExp(`^${IDENTIFIER_PATTERN}$`),
    judgeMark: (mark, name) => {
      if (mark.kind !== 'datadir' || canonicalTemplate(mark.template) !== expected) return 'other_template';
      return mark.runId === name ? undefined : 'bad_mark';
    },
    retain: opts.keepRuns - 1,
    inFlight: [...(opts.inFlight ?? []), leaf],
    dryRun: opts.dryRun ?? false,
  });
  if (!retention.ok) return ok({ ...result, pruneFailed: [{ path: parent, message: retention.error.message }] });
  return ok({ ...result, pruned: retention.value.removed, pruneFailed: retention.value.failed });
}

// `.harness-run` must be a real directory of ours: a symlink there could aim removals elsewhere.
async function ensureDataDirParent(parent: string, workdir: string): Promise<Result<void, WorkdirError>> {
  try {
    const info = lstatSync(parent);
    if (info.isSymbolicLink() || !info.isDirectory()) {
      return err({
        reason: 'exists_not_directory',
        path: parent,
        message: `${parent} exists and is ${info.isSymbolicLink() ? 'a symlink' : 'not a directory'}`,
      });
    }
    return ok(undefined);
  } catch (error) {
    if (!isCode(error, 'ENOENT'))
      return err({ reason: 'read_failed', path: parent, message: `cannot inspect ${parent}: ${errorCode(error)}` });
  }
  try {
    mkdirSync(parent, { mode: 0o700 });
    chmodSync(parent, 0o700);
    await fsyncDirectory(workdir);
    return ok(undefined);
  } catch (error) {
    if (isCode(error, 'EEXIST')) return ensureDataDirParent(parent, workdir);
    return err({ reason: 'mkdir_failed', path: parent, message: `cannot create ${parent}: ${errorCode(error)}` });
  }
}
