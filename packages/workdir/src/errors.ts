import type { TemplateError, TemplateErrorReason } from './template.js';

/**
 * Why a directory operation refused or failed. Input problems (the template, a value, an
 * option) are refused before anything is created or removed; the rest name the path.
 */
export type WorkdirErrorReason =
  | TemplateErrorReason
  /** A non-last path element holds a run-varying variable (pruning would point at the wrong tree). */
  | 'varying_not_last'
  /** The template has no run-varying element: there is nothing per run to prune. */
  | 'shared_workdir'
  /** After `~` expansion the template is not an absolute path. */
  | 'not_absolute'
  /** `retain` / `keepRuns` is not a non-negative integer. */
  | 'bad_retain'
  /** The leaf exists without a mark (another tool's directory, or a crash between mkdir and mark). */
  | 'exists_unmarked'
  /** The leaf carries a mark for another run id. */
  | 'exists_other_run'
  /** The leaf carries a mark written for another template or kind. */
  | 'exists_other_template'
  /** The path exists but is a symlink or not a directory. */
  | 'exists_not_directory'
  /** The mark file is unreadable, not a regular file, or not a mark. */
  | 'bad_mark'
  /** createDataDir: the workdir does not exist (it is never created implicitly). */
  | 'workdir_missing'
  | 'mkdir_failed'
  | 'mark_failed'
  | 'read_failed';

export interface WorkdirError {
  reason: WorkdirErrorReason;
  path?: string;
  /** The path element (its template text) that is at fault, when one is. */
  element?: string;
  variable?: string;
  message: string;
  /** What the operator can do about it, when there is something. */
  hint?: string;
}

// A template error as a directory error (same reason slug and message).
export function fromTemplateError(error: TemplateError, element?: string): WorkdirError {
  const out: WorkdirError = { reason: error.reason, element: element ?? error.text, message: error.message };
  if (error.variable !== undefined) out.variable = error.variable;
  return out;
}

// Node's error code, for messages.
export function errorCode(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.message : String(error);
}
