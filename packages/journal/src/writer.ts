import { createHash, randomBytes } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { err, ok, type Result } from '@runplan/common';
import { ioError, JournalFailure, type JournalError } from './errors.js';
import {
  encodeRecord,
  FORMAT_VERSION,
  GENESIS_PREV,
  HEADER_TYPE,
  isIdentifier,
  HEADER_KEYS,
  isPlainObject,
  MAX_LINE_BYTES,
  REPAIRED_TYPE,
  typeProblem,
  type JournalRecord,
} from './format.js';
import { fsyncDirectory, nodeJournalFs, writeAll, type JournalFs } from './fs.js';
import { acquireLock, type HeldLock, type LockEvent } from './lock.js';
import { truncateTornTail, type TailRepair } from './torn-tail.js';
import { scanJournal, type ScanResult } from './scan.js';
import { describeStatus } from './status.js';

/** The one process allowed to append to a journal, for as long as it holds the lock. */
export interface JournalWriter {
  readonly path: string;
  readonly runId: string;
  /** Appends one record; resolves only after it (and everything before it) is fdatasync'ed. */
  append(type: string, data?: Record<string, unknown>): Promise<JournalRecord>;
  /** Appends the terminal receipt; refused (`terminal`) if the journal already has one. */
  appendTerminal(type: string, data?: Record<string, unknown>): Promise<JournalRecord>;
  /** Whether a terminal record is written or queued: nothing more may be appended. */
  readonly terminal: boolean;
  /** seq of the last record known durable. */
  readonly lastSeq: number;
  /** What opening repaired, if the journal had a torn tail. */
  readonly repaired: TailRepair | undefined;
  /** Waits for queued appends, closes the file and releases the writer lock. */
  close(): Promise<void>;
}

export type JournalEvent =
  | LockEvent
  | { type: 'journal-created'; path: string; runId: string }
  | ({ type: 'journal-repaired'; path: string } & TailRepair);

export interface OpenWriterOptions {
  /** Create the journal (with its header) when it does not exist. Default false. */
  create?: boolean;
  /** With `create`: refuse (`exists`) when the file already exists (`journal init`). */
  exclusive?: boolean;
  /** Run id for a header this call writes; generated when absent. */
  runId?: string;
  /**
   * More fields for a header this call writes (e.g. the run's place in its history): read
   * back from the very first record, so they exist for every run that has a journal at all.
   * `format`, `runId` and `salt` are the journal's own and refused here (`bad_record`).
   */
  headerFields?: Record<string, unknown>;
  /** Wait this long for a live writer to finish before `lock_held`. Default 0. */
  waitMs?: number;
  /** Take the lock even from a holder that cannot be verified (another host). */
  breakLock?: boolean;
  /** File operations (tests count fdatasync or inject EFBIG through it). */
  fs?: JournalFs;
  onEvent?: (event: JournalEvent) => void;
  /** Identity file of the writer lock. Default `<path>.lock.json`. */
  identityPath?: string;
  /** Extra fields for the lock identity (e.g. the coordinator's role). */
  details?: Record<string, unknown>;
  /**
   * A clean scan of this journal the caller already made (`scanJournal` with `digest`,
   * e.g. while reading it). Once it holds the lock the writer reads the file back and
   * uses this result instead of scanning again only when the file is exactly the bytes
   * that scan checked: the same size and the same sha256. Anything else (a different size
   * or digest, a scan that was not clean or has no digest) and it scans in full as usual.
   */
  scanned?: ScanResult;
}

// The writer lock's identity file, beside the journal.
export function identityPathFor(path: string): string {
  return `${path}.lock.json`;
}

// A journal path that cannot be right (an empty or stringified-undefined name, a
// directory, a missing parent) is refused before anything is opened (F10).
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
  try {
    if (statSync(path).isDirectory()) return bad('is a directory');
  } catch {
    // does not exist yet: fine
  }
  return undefined;
}

// A fresh run id when the caller gave none: sortable time plus randomness.
export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(2).toString('hex')}`;
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

function tooLarge(path: string, type: string, bytes: number): JournalError {
  return {
    reason: 'record_too_large',
    path,
    message: `a ${type} record of ${bytes} bytes is over the ${MAX_LINE_BYTES}-byte limit (store big evidence in a file and journal its path)`,
  };
}

interface Pending {
  bytes: Buffer;
  record: JournalRecord;
  resolve: (record: JournalRecord) => void;
  reject: (failure: JournalFailure) => void;
}

/**
 * Appends with group commit: appends made while a write+fdatasync is in flight queue up
 * and go out together in one write and one fdatasync. Each append resolves only after
 * the fdatasync covering it returned. The first write or sync error poisons the writer:
 * that append and every later one reject with the same failure (a failed fsync cannot
 * be retried safely — the kernel may have dropped the dirty pages).
 */
class Writer implements JournalWriter {
  readonly path: string;
  runId: string;
  repaired: TailRepair | undefined;
  private readonly fd: number;
  private readonly journalFs: JournalFs;
  private readonly lock: HeldLock;
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private failure: JournalFailure | undefined;
  private closing: Promise<void> | undefined;
  private nextSeq: number;
  private prevCrc: string;
  private terminalQueued: boolean;
  private durableSeq: number;

  constructor(path: string, fd: number, journalFs: JournalFs, lock: HeldLock, scan: ScanResult) {
    this.path = path;
    this.fd = fd;
    this.journalFs = journalFs;
    this.lock = lock;
    this.runId = scan.header?.runId ?? '';
    this.nextSeq = scan.lastSeq + 1;
    this.prevCrc = scan.count > 0 ? scan.lastCrc : GENESIS_PREV;
    this.terminalQueued = scan.terminal;
    this.durableSeq = scan.lastSeq;
  }

  get terminal(): boolean {
    return this.terminalQueued;
  }

  get lastSeq(): number {
    return this.durableSeq;
  }

  append(type: string, data: Record<string, unknown> = {}): Promise<JournalRecord> {
    return this.enqueue(type, data, false);
  }

  appendTerminal(type: string, data: Record<string, unknown> = {}): Promise<JournalRecord> {
    return this.enqueue(type, data, true);
  }

  // The header: seq 0, written once into an empty journal.
  writeHeader(runId: string, fields: Record<string, unknown> = {}): Promise<JournalRecord> {
    this.runId = runId;
    return this.push(HEADER_TYPE, headerData(runId, fields), false);
  }

  private refuse(error: JournalError): Promise<never> {
    return Promise.reject(new JournalFailure(error));
  }

  private enqueue(type: string, data: Record<string, unknown>, terminal: boolean): Promise<JournalRecord> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing) return this.refuse({ reason: 'closed', path: this.path, message: `the writer of ${this.path} is closed` });
    if (this.terminalQueued)
      return this.refuse({
        reason: 'terminal',
        path: this.path,
        message: `${this.path} already ends with its terminal record: nothing may be appended after it`,
      });
    const problem = recordProblem(this.path, type, data);
    if (problem) return this.refuse(problem);
    return this.push(type, data, terminal);
  }

  private push(type: string, data: Record<string, unknown>, terminal: boolean): Promise<JournalRecord> {
    const record: JournalRecord = {
      seq: this.nextSeq,
      prev: this.prevCrc,
      ts: new Date().toISOString(),
      type,
      data,
      ...(terminal ? { terminal: true as const } : {}),
    };
    let encoded;
    try {
      encoded = encodeRecord(record);
    } catch (e) {
      return this.refuse({
        reason: 'bad_record',
        path: this.path,
        message: `record data is not JSON: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
    if (encoded.bytes.length > MAX_LINE_BYTES) return this.refuse(tooLarge(this.path, type, encoded.bytes.length));
    this.nextSeq += 1;
    this.prevCrc = encoded.crc;
    if (terminal) this.terminalQueued = true;
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes: encoded.bytes, record, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      // Let appends made in the same tick join this batch.
      await Promise.resolve();
      await this.flushQueued();
    })().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0) this.schedule();
    });
  }

  private async flushQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      if (!this.failure) {
        try {
          await writeAll(this.journalFs, this.fd, batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((p) => p.bytes)));
          await this.journalFs.fdatasync(this.fd);
          this.durableSeq = batch[batch.length - 1]!.record.seq;
          for (const pending of batch) pending.resolve(pending.record);
          continue;
        } catch (e) {
          this.failure = new JournalFailure(ioError(this.path, 'appending to', e), { cause: e });
        }
      }
      for (const pending of batch) pending.reject(this.failure);
    }
  }

  // Never rejects: every acknowledged record is already synced, so a failing close(2)
  // must not turn a durable append into a reported failure (F22).
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.flushing) await this.flushing;
      await this.journalFs.close(this.fd).catch(() => {});
      await this.lock.release().catch(() => {});
    })();
    return this.closing;
  }
}

// A writer continuing a journal whose valid prefix `scan` describes. The caller holds the lock.
export async function resumeWriter(path: string, lock: HeldLock, scan: ScanResult, journalFs: JournalFs): Promise<Writer> {
  const fd = await journalFs.open(path, constants.O_WRONLY | constants.O_APPEND);
  return new Writer(path, fd, journalFs, lock, scan);
}

// Creates the journal holding just its header: written to a temp file, synced, then
// linked into place, so the journal appears whole or not at all. False if it exists.
// The data of a new header: the journal's own fields, then the application's.
function headerData(runId: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { format: FORMAT_VERSION, runId, salt: randomBytes(16).toString('hex'), ...fields };
}

async function createJournal(path: string, runId: string, fields: Record<string, unknown>, journalFs: JournalFs): Promise<boolean> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const header = encodeRecord({
    seq: 0,
    prev: GENESIS_PREV,
    ts: new Date().toISOString(),
    type: HEADER_TYPE,
    data: headerData(runId, fields),
  });
  const fd = await journalFs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    try {
      await writeAll(journalFs, fd, header.bytes);
      await journalFs.fdatasync(fd);
    } finally {
      await journalFs.close(fd);
    }
    try {
      await link(temp, path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
    await fsyncDirectory(dir, journalFs);
    return true;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/**
 * Opens the single writer of a journal: takes its lock (waiting up to `waitMs`), creates
 * it if asked, refuses corruption, and repairs a torn tail (keeping `.broken`, then
 * journaling `journal-repaired`). The lock is held until `close()` or process death.
 */
export async function openWriter(path: string, options: OpenWriterOptions = {}): Promise<Result<JournalWriter, JournalError>> {
  const bad = pathProblem(path);
  if (bad) return err(bad);
  if (options.runId !== undefined && !isIdentifier(options.runId))
    return err({
      reason: 'bad_run_id',
      path,
      message: `run id ${JSON.stringify(options.runId)} is not an identifier ([A-Za-z0-9][A-Za-z0-9._-]*)`,
    });
  const lock = await acquireLock(path, {
    identityPath: options.identityPath ?? identityPathFor(path),
    ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}),
    ...(options.breakLock ? { breakLock: true } : {}),
    details: { journal: path, ...options.details },
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  if (!lock.ok) return lock;
  let opened: Result<JournalWriter, JournalError>;
  try {
    opened = await openLocked(path, lock.value, options);
  } catch (e) {
    opened = err(e instanceof JournalFailure ? e.error : ioError(path, 'opening', e));
  }
  if (!opened.ok) await lock.value.release();
  return opened;
}

/** Bytes read at a time when checking a journal against an earlier scan. */
const VERIFY_CHUNK_BYTES = 1024 * 1024;

// Whether the file at `path` is exactly the bytes a clean, digested scan checked: same
// size, same sha256 (read back in bounded chunks). False for anything else, so the caller
// scans in full; throws only as scanJournal would (ENOENT…).
async function holdsScannedBytes(path: string, scanned: ScanResult): Promise<boolean> {
  if (scanned.status.kind !== 'clean' || scanned.sha256 === undefined || scanned.validEnd !== scanned.size) return false;
  const handle = await open(path, 'r');
  try {
    if ((await handle.stat()).size !== scanned.size) return false;
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(Math.min(VERIFY_CHUNK_BYTES, Math.max(1, scanned.size)));
    let offset = 0;
    while (offset < scanned.size) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, scanned.size - offset), offset);
      if (bytesRead === 0) return false;
      hash.update(buffer.subarray(0, bytesRead));
      offset += bytesRead;
    }
    return hash.digest('hex') === scanned.sha256;
  } finally {
    await handle.close();
  }
}

async function openLocked(path: string, lock: HeldLock, options: OpenWriterOptions): Promise<Result<JournalWriter, JournalError>> {
  const journalFs = options.fs ?? nodeJournalFs;
  const runId = options.runId ?? newRunId();
  const fields = options.headerFields ?? {};
  if (!isPlainObject(fields)) return err({ reason: 'bad_record', path, message: 'headerFields must be a JSON object' });
  const reserved = Object.keys(fields).find((key) => HEADER_KEYS.includes(key));
  if (reserved !== undefined)
    return err({ reason: 'bad_record', path, message: `headerFields may not set "${reserved}": the journal writes it` });
  let created = false;
  let scan: ScanResult;
  for (;;) {
    try {
      scan = options.scanned !== undefined && (await holdsScannedBytes(path, options.scanned)) ? options.scanned : await scanJournal(path);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (!options.create) return err({ reason: 'missing', path, message: `${path} does not exist` });
    created = await createJournal(path, runId, fields, journalFs);
    if (created) options.onEvent?.({ type: 'journal-created', path, runId });
  }
  if (options.exclusive && !created) return err({ reason: 'exists', path, message: `${path} already exists` });
  // One journal records one logical run (F28): never continue another run's journal.
  if (options.runId !== undefined && scan.header && scan.header.runId !== options.runId)
    return err({ reason: 'bad_run_id', path, message: `${path} records run ${scan.header.runId}, not ${options.runId}` });
  if (scan.status.kind === 'corrupt')
    return err({ reason: 'corrupt', path, status: scan.status, message: describeStatus(path, scan.status) });
  let repair: TailRepair | undefined;
  if (scan.status.kind === 'torn_tail' && scan.size > 0) {
    repair = await truncateTornTail(path, scan.validEnd, scan.size, journalFs);
    options.onEvent?.({ type: 'journal-repaired', path, ...repair });
  }
  if (scan.count === 0 && !options.create) {
    return err({ reason: 'missing', path, message: `${path} has no header (empty, or torn before its header was written)` });
  }
  const writer = await resumeWriter(path, lock, scan, journalFs);
  writer.repaired = repair;
  try {
    if (scan.count === 0) await writer.writeHeader(runId, fields);
    if (repair && !writer.terminal) await writer.append(REPAIRED_TYPE, { ...repair });
  } catch (e) {
    await writer.close().catch(() => {});
    // close() released the lock already; the caller's release is then a no-op.
    throw e;
  }
  return ok(writer);
}
