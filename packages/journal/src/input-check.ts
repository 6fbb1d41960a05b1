import { statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { JournalError } from './errors.js';
import { encodeRecord, GENESIS_PREV, HEADER_TYPE, isPlainObject, MAX_LINE_BYTES, typeProblem, type JournalRecord } from './format.js';

// What the journal refuses before anything is written: a path that cannot be a journal, a
// record that can never be appended, one over the size limit.

// A journal path that cannot be right (an empty or stringified-undefined name, a
// directory or other non-regular file, a missing parent) is refused before anything is opened (F10).
export function pathProblem(path: unknown): JournalError | undefined {
  const shown = String(path);
  const bad = (why: string): JournalError => ({ reason: 'bad_path', path: shown, message: `${JSON.stringify(shown)} ${why}` });
  if (typeof path !== 'string' || path.trim() === '') return bad('is not a journal path');
  if (path.includes('\0')) return bad('holds a NUL byte');
  const name = basename(path);
  if (path.endsWith('/') || name === '.' || name === '..') return bad('names a directory, not a journal file');
  if (/^(undefined|null|NaN|\[object Object\])(\..*)?$/.test(name)) return bad('looks like a missing value turned into a file name');
  try {
    if (!statSync(dirname(path)).isDirectory()) return bad('is inside something that is not a directory');
  } catch {
    return bad('is in a directory that does not exist');
  }
  let stats: ReturnType<typeof statSync> | undefined;
  try {
    stats = statSync(path);
  } catch {
    // does not exist yet: fine
  }
  if (stats?.isDirectory()) return bad('is a directory');
  // A FIFO blocked every command forever; a device (/dev/zero) read as an empty journal.
  if (stats !== undefined && !stats.isFile()) return bad('is not a regular file (a FIFO, socket or device)');
  return undefined;
}

// Why a record of this type and data can never be appended (its size aside), or undefined.
export function recordProblem(path: string, type: string, data: unknown): JournalError | undefined {
  const problem = typeProblem(type) ?? (type === HEADER_TYPE ? `"${HEADER_TYPE}" is reserved for the first record` : undefined);
  if (problem) return { reason: 'bad_record', path, message: problem };
  if (!isPlainObject(data)) return { reason: 'bad_record', path, message: 'record data must be a JSON object' };
  return undefined;
}

/**
 * recordProblem plus the size limit, measured as if the record were seq 0 (a later seq
 * only adds digits): what a caller checks before opening a writer, so input that can
 * never be appended creates nothing.
 */
export function recordProblemBeforeOpen(path: string, type: string, data: unknown, terminal: boolean): JournalError | undefined {
  const problem = recordProblem(path, type, data);
  if (problem) return problem;
  let size: number;
  try {
    const record: JournalRecord = { seq: 0, prev: GENESIS_PREV, ts: new Date().toISOString(), type, data: data as Record<string, unknown> };
    size = encodeRecord(terminal ? { ...record, terminal: true } : record).bytes.length;
  } catch (e) {
    return { reason: 'bad_record', path, message: `record data is not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  return size > MAX_LINE_BYTES ? tooLarge(path, type, size) : undefined;
}

// The refusal of a record over MAX_LINE_BYTES.
export function tooLarge(path: string, type: string, bytes: number): JournalError {
  return {
    reason: 'record_too_large',
    path,
    message: `a ${type} record of ${bytes} bytes is over the ${MAX_LINE_BYTES}-byte limit (store big evidence in a file and journal its path)`,
  };
}
