import { parseDuration, typedValue, unreachable } from '@runplan/common';
import type { JournalError, JournalErrorReason } from './errors.js';
import { JournalFailure } from './errors.js';
import { isPlainObject } from './format.js';
import { scanJournal, type ScanResult } from './scan.js';
import { describeStatus, type JournalStatus } from './status.js';
import { pathProblem } from './input-check.js';

// What the journal CLI's commands share: exit codes, messages, argument checks.

export const EXIT_CODES = `  0  success (validate: clean; holder: someone holds the lock)
  1  a negative answer: validate found a torn tail (repairable with journal repair); holder: nobody holds the lock
  2  usage or invalid input: unknown flag, bad duration, --data or a stdin line not a JSON object, bad record type, record over 1 MiB, bad or missing journal path, an empty (0-byte) journal for cat, validate or repair (no header: nothing to repair), a run id that is not an identifier or not the journal's
  3  refused or failed: the journal is corrupt (nothing was changed), already ends with its terminal record, already exists (init), or a write/sync failed (every record acknowledged before it is durable)
  4  the writer lock is held by a live process (after --wait), or was taken on another host (--break-lock overrides)`;

export const DEFAULT_WAIT = '10s';

// Exit code of every refusal: one switch, exhaustive.
export function exitCodeFor(reason: JournalErrorReason): number {
  switch (reason) {
    case 'lock_held':
    case 'foreign_host':
      return 4;
    case 'corrupt':
    case 'terminal':
    case 'exists':
    case 'io_error':
    case 'closed':
      return 3;
    case 'missing':
    case 'bad_path':
    case 'bad_record':
    case 'bad_run_id':
    case 'record_too_large':
      return 2;
    default:
      return unreachable(reason);
  }
}

export function hintFor(error: JournalError): string | undefined {
  switch (error.reason) {
    case 'lock_held':
      return 'another writer is appending: wait longer (--wait 1m) or stop it; the lock frees itself when that process exits';
    case 'foreign_host':
      return 'a lock taken on another host cannot be checked from here; if that writer is gone, pass --break-lock';
    case 'corrupt':
      return `the journal fails closed and was not changed; inspect it with: cut -c10- ${error.path} | jq -c .`;
    case 'terminal':
      return 'the run this journal records has ended; start a new journal for new work';
    case 'exists':
      return 'append to it with journal append, or pick another file';
    case 'io_error':
      return `every record acknowledged before the error is durable; journal validate ${error.path} shows the last one`;
    case 'missing':
      return 'create it with journal init FILE --run-id ID (remove an empty file first), or append without --no-create';
    case 'record_too_large':
      return 'store big evidence in a file and journal its path';
    case 'bad_path':
    case 'bad_record':
    case 'bad_run_id':
    case 'closed':
      return undefined;
    default:
      return unreachable(error);
  }
}

export function say(reason: string, message: string, hint?: string): void {
  process.stderr.write(`journal: ${reason}: ${message}\n${hint ? `  hint: ${hint}\n` : ''}`);
}

// Reports a refusal and returns its exit code.
export function fail(error: JournalError): number {
  say(error.reason, error.message, hintFor(error));
  return exitCodeFor(error.reason);
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export function waitMsFrom(argv: string[]): number {
  const text = typedValue(argv, 'wait') ?? DEFAULT_WAIT;
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`--wait ${JSON.stringify(text)} is not a duration (500ms, 30s, 10m, 2h)`);
  return ms;
}

export function fileArg(file: unknown): string {
  const error = pathProblem(typeof file === 'string' ? file : undefined);
  if (error) throw new JournalFailure(error);
  return file as string;
}

export function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new JournalFailure({ reason: 'bad_record', path: '', message: `${what} is not JSON: ${text.slice(0, 80)}` });
  }
  if (!isPlainObject(value))
    throw new JournalFailure({ reason: 'bad_record', path: '', message: `${what} is not a JSON object: ${text.slice(0, 80)}` });
  return value;
}

// Scans a journal, reporting a missing file as a refusal.
export async function scanOrFail(file: string, options?: Parameters<typeof scanJournal>[1]): Promise<ScanResult> {
  try {
    return await scanJournal(file, options);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new JournalFailure({ reason: 'missing', path: file, message: `${file} does not exist` });
    throw new JournalFailure({
      reason: 'io_error',
      path: file,
      message: `reading ${file} failed: ${(e as Error).message}`,
      ...(code ? { code } : {}),
    });
  }
}

export function statusJson(file: string, scan: ScanResult): Record<string, unknown> {
  const { kind, ...where } = scan.status;
  return {
    path: file,
    status: kind,
    ...where,
    count: scan.count,
    lastSeq: scan.lastSeq,
    terminal: scan.terminal,
    ...(scan.header ? { runId: scan.header.runId } : {}),
  };
}

export function reportStatus(file: string, status: JournalStatus): void {
  if (status.kind === 'torn_tail')
    say('torn_tail', describeStatus(file, status), `journal repair ${file} keeps a .broken copy and cuts the torn line`);
  if (status.kind === 'corrupt')
    say(
      'corrupt',
      describeStatus(file, status),
      `the journal fails closed; nothing was changed; inspect it with: cut -c10- ${file} | jq -c .`,
    );
}
