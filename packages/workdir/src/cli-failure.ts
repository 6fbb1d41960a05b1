import { unreachable } from '@runplan/common';
import type { WorkdirError, WorkdirErrorReason } from './errors.js';
import type { TemplateError } from './template.js';

// How workdir tells a failure on stderr and which exit code it gives.

/** The exit codes as `workdir --help` lists them; exitCodeFor decides them. */
export const EXIT_CODES = `  0  success
  1  refused or failed on the filesystem: the path exists unmarked, belongs to another run or
     template, is a symlink or file; a bad mark; the workdir of datadir is missing; mkdir,
     mark or removal failed (prune/datadir: printed paths were removed, the rest reported)
  2  usage or invalid input: unknown option or command, bad --var/--tier/--retain/--keep-runs,
     a template error (unknown_variable, not_allowed_in_tier, untrusted_variable,
     bad_identifier, unterminated, empty_reference, missing_value), varying_not_last,
     shared_workdir, not_absolute. Nothing is created or removed.`;

// One line naming reason, element and variable; then the hint, if any.
export function reportError(error: WorkdirError, template: string | undefined, io: { err: (line: string) => void }): number {
  // Template problems name the template (and the path element, unless the message already does).
  const where =
    template === undefined || error.path !== undefined
      ? ''
      : error.element !== undefined && !error.message.includes(JSON.stringify(error.element))
        ? `element ${JSON.stringify(error.element)} of ${JSON.stringify(template)}: `
        : `${JSON.stringify(template)}: `;
  io.err(`workdir: ${error.reason}: ${where}${error.message}`);
  if (error.hint !== undefined) io.err(`  hint: ${error.hint}`);
  return exitCodeFor(error.reason);
}

// A template error (render): the reason and the text it is in; always a usage error.
export function reportTemplateError(error: TemplateError, io: { err: (line: string) => void }): number {
  io.err(`workdir: ${error.reason}: in ${JSON.stringify(error.text)}: ${error.message}`);
  return 2;
}

// The one place a failure becomes an exit code.
export function exitCodeFor(reason: WorkdirErrorReason): 1 | 2 {
  switch (reason) {
    case 'unknown_variable':
    case 'not_allowed_in_tier':
    case 'untrusted_variable':
    case 'bad_identifier':
    case 'unterminated':
    case 'missing_value':
    case 'empty_reference':
    case 'varying_not_last':
    case 'shared_workdir':
    case 'not_absolute':
    case 'bad_retain':
      return 2;
    case 'exists_unmarked':
    case 'exists_other_run':
    case 'exists_other_template':
    case 'exists_not_directory':
    case 'bad_mark':
    case 'workdir_missing':
    case 'mkdir_failed':
    case 'mark_failed':
    case 'read_failed':
      return 1;
    default:
      return unreachable(reason);
  }
}
