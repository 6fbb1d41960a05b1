import { createHash, randomBytes, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { err, ok, type Result } from '@runplan/common';
import { ioError, JournalFailure, type JournalError } from './errors.js';
import { encodeRecord, GENESIS_PREV, HEADER_KEYS, HEADER_TYPE, isIdentifier, isPlainObject, REPAIRED_TYPE } from './format.js';
import { fsyncDirectory, nodeJournalFs, writeAll, type JournalFs } from './fs.js';
import { acquireLock } from './lock.js';
import { truncateTornTail, type TailRepair } from './torn-tail.js';
import { hashStateOf, scanJournal, type ScanResult } from './scan.js';
import { describeStatus } from './status.js';
import { pathProblem } from './input-check.js';
import { headerData, identityPathFor, newRunId, resumeWriter, type JournalEvent, type JournalWriter } from './writer.js';
import type { HeldLock } from './lock.js';

// Opening a journal's one writer: the lock, creation, refusing corruption, repairing a torn tail.

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
  /**
   * Keep a running sha256 of the file, so the writer's position() says what its durable
   * bytes hash to (the journal is then hashed once as it is opened). Default false.
   */
  digest?: boolean;
}

// Creates the journal holding just its header: written to a temp file, synced, then
// linked into place, so the journal appears whole or not at all. False if it exists.
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
// size, same sha256 (read back in bounded chunks). It is when this returns the sha256 state
// of those bytes; undefined for anything else, so the caller scans in full; throws only as
// scanJournal would (ENOENT…).
async function holdsScannedBytes(path: string, scanned: ScanResult): Promise<Hash | undefined> {
  if (scanned.status.kind !== 'clean' || scanned.sha256 === undefined || scanned.validEnd !== scanned.size) return undefined;
  const handle = await open(path, 'r');
  try {
    if ((await handle.stat()).size !== scanned.size) return undefined;
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(Math.min(VERIFY_CHUNK_BYTES, Math.max(1, scanned.size)));
    let offset = 0;
    while (offset < scanned.size) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, scanned.size - offset), offset);
      if (bytesRead === 0) return undefined;
      hash.update(buffer.subarray(0, bytesRead));
      offset += bytesRead;
    }
    const state = hash.copy();
    return hash.digest('hex') === scanned.sha256 ? state : undefined;
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
  let hash: Hash | undefined;
  for (;;) {
    try {
      const scanned = options.scanned;
      hash = scanned !== undefined ? await holdsScannedBytes(path, scanned) : undefined;
      scan = hash !== undefined && scanned !== undefined ? scanned : await scanJournal(path, { digest: options.digest === true });
      hash ??= options.digest === true ? hashStateOf(scan) : undefined;
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
  const writer = await resumeWriter(path, lock, scan, journalFs, options.digest === true ? hash : undefined);
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
