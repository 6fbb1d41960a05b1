import { randomBytes, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { ioError, JournalFailure, type JournalError } from './errors.js';
import { encodeOrdered, FORMAT_VERSION, GENESIS_PREV, HEADER_TYPE, MAX_LINE_BYTES, type JournalRecord } from './format.js';
import { writeAll, type JournalFs } from './fs.js';
import { recordProblem, tooLarge } from './input-check.js';
import type { HeldLock, LockEvent } from './lock.js';
import type { TailRepair } from './torn-tail.js';
import type { ScanResult } from './scan.js';

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
  /**
   * Where the durable records end and what the file's bytes up to there hash to: opened
   * with `digest`, from a clean scan; undefined otherwise, and once a write failed.
   */
  position(): JournalPosition | undefined;
  /** Waits for queued appends, closes the file and releases the writer lock. */
  close(): Promise<void>;
}

/** The file as its writer knows it after its last durable record. */
export interface JournalPosition {
  /** seq of the last durable record. */
  lastSeq: number;
  /** Bytes in the file up to the end of that record's line. */
  size: number;
  /** sha256 (hex) of those bytes. */
  sha256: string;
}

export type JournalEvent =
  | LockEvent
  | { type: 'journal-created'; path: string; runId: string }
  | ({ type: 'journal-repaired'; path: string } & TailRepair);

// The writer lock's identity file, beside the journal.
export function identityPathFor(path: string): string {
  return `${path}.lock.json`;
}

// A fresh run id when the caller gave none: sortable time plus randomness.
export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  // 32 random bits: run ids (and the ownerTag prefixes made from them) of runs started in the
  // same second, by any slug on the host, must not meet (16 bits did one time in 65 536 per pair).
  return `${stamp}-${randomBytes(4).toString('hex')}`;
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
  /** The running sha256 of the durable bytes (with `digest`), and how many there are. */
  private readonly hash: Hash | undefined;
  private durableSize: number;

  constructor(path: string, fd: number, journalFs: JournalFs, lock: HeldLock, scan: ScanResult, hash: Hash | undefined) {
    this.path = path;
    this.fd = fd;
    this.journalFs = journalFs;
    this.lock = lock;
    this.runId = scan.header?.runId ?? '';
    this.nextSeq = scan.lastSeq + 1;
    this.prevCrc = scan.count > 0 ? scan.lastCrc : GENESIS_PREV;
    this.terminalQueued = scan.terminal;
    this.durableSeq = scan.lastSeq;
    this.hash = hash;
    this.durableSize = scan.validEnd;
  }

  position(): JournalPosition | undefined {
    if (this.hash === undefined || this.failure !== undefined) return undefined;
    return { lastSeq: this.durableSeq, size: this.durableSize, sha256: this.hash.copy().digest('hex') };
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
    const record: JournalRecord = { seq: this.nextSeq, prev: this.prevCrc, ts: new Date().toISOString(), type, data };
    if (terminal) record.terminal = true;
    let encoded;
    try {
      encoded = encodeOrdered(record);
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
          const bytes = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((p) => p.bytes));
          await writeAll(this.journalFs, this.fd, bytes);
          await this.journalFs.fdatasync(this.fd);
          this.durableSeq = batch[batch.length - 1]!.record.seq;
          this.hash?.update(bytes);
          this.durableSize += bytes.length;
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

// A writer continuing a journal whose valid prefix `scan` describes (`hash`: the running
// sha256 of exactly those bytes, for position()). The caller holds the lock.
export async function resumeWriter(
  path: string,
  lock: HeldLock,
  scan: ScanResult,
  journalFs: JournalFs,
  hash: Hash | undefined,
): Promise<Writer> {
  const fd = await journalFs.open(path, constants.O_WRONLY | constants.O_APPEND);
  return new Writer(path, fd, journalFs, lock, scan, hash);
}

// The data of a new header: the journal's own fields, then the application's.
export function headerData(runId: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { format: FORMAT_VERSION, runId, salt: randomBytes(16).toString('hex'), ...fields };
}
