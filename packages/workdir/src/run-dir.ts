import { chmodSync, lstatSync, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { err, fsyncDirectory, ok, type Result } from '@runplan/common';
import { errorCode, type WorkdirError } from './errors.js';
import { isCode, MARK_FILE, newMark, readMark, writeMark, type RunDirMark } from './mark.js';
import { canonicalTemplate, parsePathTemplate, renderElements, type PathOptions } from './path-template.js';
import type { TemplateVars } from './render.js';
import { checkValue, variableSpec } from './variables.js';

export interface CreateOptions extends PathOptions {
  /** The mark's creation time; default now. */
  now?: Date;
}

export interface CreatedDir {
  path: string;
  /** A marked directory of this same run already existed (a crash restart) and is used again. */
  reused: boolean;
  /** The template has no run-varying element: one unmarked directory every run shares. */
  shared: boolean;
}

/**
 * Renders a workdir template and creates the run's directory: parents as needed, the leaf
 * 0700 (chmod after mkdir, whatever the umask), then the mark, written atomically. A leaf
 * marked for this run and template is reused; anything else already there is refused.
 * A shared template (nothing varies) only ensures the directory exists and is not marked.
 */
export async function createRunDir(
  template: string,
  vars: TemplateVars,
  opts: CreateOptions = {},
): Promise<Result<CreatedDir, WorkdirError>> {
  const parsed = parsePathTemplate(template, opts);
  if (!parsed.ok) return parsed;
  const path = renderElements(parsed.value, vars);
  if (!path.ok) return path;
  if (parsed.value.shared) {
    const ensured = await ensureDirectory(path.value);
    return ensured.ok ? ok({ path: path.value, reused: ensured.value, shared: true }) : ensured;
  }
  const runId = runIdOf(vars);
  if (!runId.ok) return runId;
  const mark = newMark(template, runId.value, 'run', opts.now ?? new Date());
  const made = await createMarkedDir(path.value, mark);
  return made.ok ? ok({ ...made.value, shared: false }) : made;
}

// The run id every mark records; it must be a valid identifier even when the template does not name it.
export function runIdOf(vars: TemplateVars): Result<string, WorkdirError> {
  const value = Object.hasOwn(vars, 'run.id') ? vars['run.id'] : undefined;
  if (value === undefined) {
    return err({ reason: 'missing_value', variable: 'run.id', message: '{{run.id}} has no value (the mark records it)' });
  }
  const checked = checkValue(variableSpec('run.id')!, value);
  return checked.ok ? ok(checked.text) : err({ reason: 'bad_identifier', variable: 'run.id', message: checked.message });
}

/**
 * Creates `leaf` as a fresh marked 0700 directory, or reuses it when it already carries
 * this run's mark. Shared by run dirs and datadirs.
 */
export async function createMarkedDir(leaf: string, mark: RunDirMark): Promise<Result<{ path: string; reused: boolean }, WorkdirError>> {
  for (let tries = 0; tries < 2; tries++) {
    const existing = await inspectExisting(leaf, mark);
    if (existing !== 'absent') return existing;
    const parent = await ensureDirectory(dirname(leaf));
    if (!parent.ok) return parent;
    try {
      mkdirSync(leaf, { mode: 0o700 });
    } catch (error) {
      // Someone made it between our look and our mkdir: judge what is there now.
      if (isCode(error, 'EEXIST')) continue;
      return err({ reason: 'mkdir_failed', path: leaf, message: `cannot create ${leaf}: ${errorCode(error)}` });
    }
    try {
      chmodSync(leaf, 0o700);
      await writeMark(leaf, mark);
      await fsyncDirectory(dirname(leaf));
    } catch (error) {
      // Leave nothing behind: an unmarked leaf would block this run id until removed by hand.
      try {
        rmdirSync(leaf);
      } catch {}
      return err({ reason: 'mark_failed', path: leaf, message: `cannot mark ${leaf}: ${errorCode(error)}` });
    }
    return ok({ path: leaf, reused: false });
  }
  return err({ reason: 'mkdir_failed', path: leaf, message: `${leaf} keeps appearing and disappearing while being created` });
}

// Judges an existing leaf: reuse when it is this run's, refuse otherwise; 'absent' when there is none.
async function inspectExisting(
  leaf: string,
  mark: RunDirMark,
): Promise<'absent' | Result<{ path: string; reused: boolean }, WorkdirError>> {
  let info;
  try {
    info = lstatSync(leaf);
  } catch (error) {
    // ENOTDIR: a parent is a file; mkdir names it as the failure.
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return 'absent';
    return err({ reason: 'read_failed', path: leaf, message: `cannot inspect ${leaf}: ${errorCode(error)}` });
  }
  if (info.isSymbolicLink() || !info.isDirectory()) {
    return err({
      reason: 'exists_not_directory',
      path: leaf,
      message: `${leaf} exists and is ${info.isSymbolicLink() ? 'a symlink' : 'not a directory'}`,
      hint: 'a run directory is always created fresh; move it away or choose another template',
    });
  }
  const found = await readMark(leaf);
  switch (found.state) {
    case 'unmarked':
      return err({
        reason: 'exists_unmarked',
        path: leaf,
        message: `${leaf} exists without a ${MARK_FILE} mark`,
        hint: `not created by us for a run, or a crash came between mkdir and mark; inspect it, remove it (rmdir ${leaf} if empty; a crash while marking can leave only a ..${MARK_FILE}.PID.N.tmp in it) and start the run again`,
      });
    case 'bad_mark':
      return err({
        reason: 'bad_mark',
        path: leaf,
        message: found.message,
        hint: `inspect ${leaf} and remove it by hand if it is not needed`,
      });
    case 'marked':
      break;
  }
  const other = found.mark;
  if ((other.kind ?? 'run') !== mark.kind || canonicalTemplate(other.template) !== canonicalTemplate(mark.template)) {
    return err({
      reason: 'exists_other_template',
      path: leaf,
      message: `${leaf} is marked for template ${JSON.stringify(other.template)} (${other.kind ?? 'run'}), not ${JSON.stringify(mark.template)}`,
    });
  }
  if (other.runId !== mark.runId) {
    return err({
      reason: 'exists_other_run',
      path: leaf,
      message: `${leaf} belongs to run ${other.runId} (created ${other.createdAt}), not ${mark.runId}`,
      hint: 'give this run values that render a new path (run.id, task.id or run.attempt)',
    });
  }
  try {
    chmodSync(leaf, 0o700);
  } catch (error) {
    return err({ reason: 'mkdir_failed', path: leaf, message: `cannot set mode 0700 on ${leaf}: ${errorCode(error)}` });
  }
  return ok({ path: leaf, reused: true });
}

/**
 * `mkdir -p` whose created directories are 0700 whatever the umask; ok(true) when the
 * directory already existed. An existing non-directory is refused.
 */
export async function ensureDirectory(path: string): Promise<Result<boolean, WorkdirError>> {
  let first: string | undefined;
  try {
    first = mkdirSync(path, { recursive: true, mode: 0o700 });
    if (first !== undefined) {
      // Each directory we created, from the outermost down to `path`.
      let dir = first;
      const rest = relative(first, path)
        .split('/')
        .filter((piece) => piece !== '');
      chmodSync(dir, 0o700);
      for (const piece of rest) {
        dir = join(dir, piece);
        chmodSync(dir, 0o700);
      }
      await fsyncDirectory(dirname(first));
    }
  } catch (error) {
    const inTheWay = isCode(error, 'EEXIST') || isCode(error, 'ENOTDIR') ? notADirectoryOn(path) : undefined;
    const what = inTheWay === path ? 'it exists and' : inTheWay;
    const why = inTheWay === undefined ? errorCode(error) : `${what} is not a directory (${errorCode(error)})`;
    return err({ reason: 'mkdir_failed', path, message: `cannot create ${path}: ${why}` });
  }
  return ok(first === undefined);
}

// The nearest of `path` and its parents that exists and is not a directory (what made a
// recursive mkdir fail with EEXIST or ENOTDIR), or undefined.
function notADirectoryOn(path: string): string | undefined {
  for (let at = path; ; at = dirname(at)) {
    try {
      if (!statSync(at).isDirectory()) return at;
    } catch {
      // Not there (or not reachable): look further up.
    }
    if (dirname(at) === at) return undefined;
  }
}
