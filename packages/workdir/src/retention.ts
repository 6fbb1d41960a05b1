import { lstat, readdir, realpath, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { err, ok, type Result } from '@runplan/common';
import { errorCode, type WorkdirError } from './errors.js';
import { isCode, MARK_FILE, readMark, type RunDirMark } from './mark.js';

/**
 * Why an entry of a holding directory survived a prune. Every entry that is not removed
 * gets exactly one, the first that applies, in this order.
 */
export type KeepReason =
  /** A symlink: never followed, never deleted. */
  | 'symlink'
  /** A file, socket, … — only directories are ours. */
  | 'not_directory'
  /** A name the template could not have rendered: not ours, whatever it contains. */
  | 'not_matching'
  /** Named by the caller as a run in flight. */
  | 'in_flight'
  /** No mark: created by someone else, by an earlier version, or a crash came before the mark. */
  | 'unmarked'
  /** A mark that cannot be read or does not fit its directory. */
  | 'bad_mark'
  /** Marked for another template (or a datadir among run dirs). */
  | 'other_template'
  /** Ours, but among the newest `retain`. */
  | 'retained';

export interface KeptEntry {
  path: string;
  reason: KeepReason;
  /** Creation time from the mark, when the entry is ours. */
  createdAt?: string;
  detail?: string;
}

export interface PruneReport {
  /** The directory whose entries were judged. */
  holding: string;
  /** Removed paths, oldest first (with dryRun: the paths that would be removed). */
  removed: string[];
  kept: KeptEntry[];
  /** Removals that were attempted and failed (the entry may be partly gone). */
  failed: Array<{ path: string; message: string }>;
  dryRun: boolean;
}

export interface RetentionRule {
  /** The directory whose entries are judged. */
  holding: string;
  /** The names the template could have rendered. */
  shape: RegExp;
  /** Whether a mark is ours for this template; a keep reason when it is not. */
  judgeMark: (mark: RunDirMark, name: string) => KeepReason | undefined;
  retain: number;
  inFlight: readonly string[];
  dryRun: boolean;
}

// Whether `n` is a usable retention count (a non-negative integer).
export function isRetainCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/**
 * Removes the oldest of our directories in `holding` beyond the newest `retain`. An entry is
 * ours only when it is a real directory (lstat; symlinks never followed), its name fits the
 * template's shape, it is not in flight and it carries a mark for this template. Everything
 * else survives with its reason.
 */
export async function applyRetention(rule: RetentionRule): Promise<Result<PruneReport, WorkdirError>> {
  const report: PruneReport = { holding: rule.holding, removed: [], kept: [], failed: [], dryRun: rule.dryRun };
  try {
    const info = await stat(rule.holding);
    if (!info.isDirectory()) {
      return err({ reason: 'read_failed', path: rule.holding, message: `holding directory ${rule.holding} is not a directory` });
    }
  } catch (error) {
    if (isCode(error, 'ENOENT')) return ok(report);
    return err({ reason: 'read_failed', path: rule.holding, message: `cannot read ${rule.holding}: ${errorCode(error)}` });
  }
  let names: string[];
  try {
    // Loaded on first use: fast-glob is most of this tool's start-up time, and only pruning needs it.
    const { default: fg } = await import('fast-glob');
    names = await fg('*', {
      cwd: rule.holding,
      dot: true,
      deep: 1,
      onlyFiles: false,
      onlyDirectories: false,
      followSymbolicLinks: false,
      unique: true,
    });
  } catch (error) {
    return err({ reason: 'read_failed', path: rule.holding, message: `cannot list ${rule.holding}: ${errorCode(error)}` });
  }
  names.sort();
  const inFlight = await inFlightSet(rule.inFlight);
  const realHolding = await realpath(rule.holding).catch(() => rule.holding);
  const ours: Array<{ path: string; mark: RunDirMark; time: number }> = [];
  for (const name of names) {
    const path = join(rule.holding, name);
    const kept = await judge(rule, name, path, realHolding, inFlight);
    if ('reason' in kept) report.kept.push(kept);
    else ours.push({ path, mark: kept.mark, time: Date.parse(kept.mark.createdAt) });
  }
  ours.sort((a, b) => a.time - b.time || (a.path < b.path ? -1 : 1));
  const removable = Math.max(0, ours.length - rule.retain);
  for (const [index, entry] of ours.entries()) {
    if (index >= removable) {
      report.kept.push({ path: entry.path, reason: 'retained', createdAt: entry.mark.createdAt });
      continue;
    }
    if (rule.dryRun) {
      report.removed.push(entry.path);
      continue;
    }
    const removed = await removeOurs(entry.path);
    if (removed === undefined) report.removed.push(entry.path);
    else report.failed.push({ path: entry.path, message: removed });
  }
  report.kept.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return ok(report);
}

// One entry's verdict: a keep reason, or its mark when it is ours.
async function judge(
  rule: RetentionRule,
  name: string,
  path: string,
  realHolding: string,
  inFlight: Set<string>,
): Promise<KeptEntry | { mark: RunDirMark }> {
  let info;
  try {
    info = await lstat(path);
  } catch (error) {
    return { path, reason: 'not_directory', detail: `vanished or unreadable: ${errorCode(error)}` };
  }
  if (info.isSymbolicLink()) return { path, reason: 'symlink' };
  if (!info.isDirectory()) return { path, reason: 'not_directory' };
  if (!rule.shape.test(name)) return { path, reason: 'not_matching' };
  if (inFlight.has(resolve(path)) || inFlight.has(join(realHolding, name))) return { path, reason: 'in_flight' };
  const found = await readMark(path);
  switch (found.state) {
    case 'unmarked':
      return { path, reason: 'unmarked' };
    case 'bad_mark':
      return { path, reason: 'bad_mark', detail: found.message };
    case 'marked':
      break;
  }
  const refused = rule.judgeMark(found.mark, name);
  if (refused) return { path, reason: refused, createdAt: found.mark.createdAt };
  return { mark: found.mark };
}

// Both the given and the real form of each in-flight path, so /tmp vs /private/tmp cannot miss.
async function inFlightSet(paths: readonly string[]): Promise<Set<string>> {
  const set = new Set<string>();
  for (const path of paths) {
    set.add(resolve(path));
    const real = await realpath(path).catch(() => undefined);
    if (real !== undefined) set.add(real);
  }
  return set;
}

// Removes one of our directories after checking again that it is still a real directory.
// The mark goes last: a removal that fails part way leaves the directory marked, still ours,
// so the next prune tries it again and says why it fails (`fs.rm` removes a directory's
// entries all at once, mark included, and the rest was then kept as `unmarked` for good).
// When that fails, what is left is removed again one entry at a time, so the message names
// the entry that would not go and its errno (`fs.rm` retries a file's EPERM as a directory
// and reports that rmdir's ENOTDIR instead).
async function removeOurs(path: string): Promise<string | undefined> {
  try {
    const info = await lstat(path);
    if (info.isSymbolicLink() || !info.isDirectory()) return `${path} changed into a non-directory before removal; left alone`;
  } catch (error) {
    return `cannot remove ${path}: ${errorCode(error)}`;
  }
  try {
    const names = (await readdir(path)).filter((name) => name !== MARK_FILE);
    await Promise.all(names.map((name) => rm(join(path, name), { recursive: true })));
    await rm(path, { recursive: true });
    return undefined;
  } catch {
    // what is left goes one entry at a time below, to name the one that will not
  }
  const stuck = await removeTree(path);
  return stuck === undefined
    ? undefined
    : `cannot remove ${path}: ${stuck.path === path ? '' : `${stuck.path}: `}${errorCode(stuck.error)}`;
}

// Removes a directory and everything below it, never following a symlink (each is removed
// as itself); stops at the first entry that will not go and says which, and why. An entry
// already gone counts as removed: `fs.rm` removes entries in parallel, and some of its
// removals may still land after it has failed.
async function removeTree(dir: string): Promise<{ path: string; error: unknown } | undefined> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    return gone(error) ? undefined : { path: dir, error };
  }
  // The mark last (see removeOurs).
  entries.sort((a, b) => Number(a.name === MARK_FILE) - Number(b.name === MARK_FILE));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const stuck = await removeTree(path);
      if (stuck !== undefined) return stuck;
      continue;
    }
    try {
      await unlink(path);
    } catch (error) {
      if (!gone(error)) return { path, error };
    }
  }
  try {
    await rmdir(dir);
    return undefined;
  } catch (error) {
    return gone(error) ? undefined : { path: dir, error };
  }
}

const gone = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';
