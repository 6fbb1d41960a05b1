import { createHash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { MAX_LINE_BYTES, type JournalHeader, type JournalRecord } from './format.js';
import { LineChecker, type Problem } from './line-check.js';
import type { JournalStatus } from './status.js';
import { classifyTail } from './tail-verdict.js';

const CHUNK_BYTES = 1024 * 1024;
const NL = 0x0a;
const NUL = 0x00;

/** Everything one streaming pass learns about a journal's valid prefix. */
export interface ScanResult {
  status: JournalStatus;
  /** Valid records, the header included. */
  count: number;
  /** seq of the last valid record; -1 when there is none. */
  lastSeq: number;
  /** Checksum of the last valid line (the next record's prev). */
  lastCrc: string;
  terminal: boolean;
  header?: JournalHeader;
  /** Byte offset where the valid prefix ends (the file size when clean). */
  validEnd: number;
  /** Bytes scanned: the file size when the scan began. */
  size: number;
  /**
   * With `digest`: sha256 (hex) of the `size` bytes scanned, set only when the status is
   * clean. `openWriter({ scanned })` takes such a result in place of its own scan when the
   * file still holds exactly these bytes.
   */
  sha256?: string;
  /** With `from`: sha256 (hex) of the first `from` bytes, when the file is at least that long. */
  prefixSha256?: string;
}

export interface ScanOptions {
  /** Called for every valid record, in order, with its exact JSON bytes. */
  onRecord?: (record: JournalRecord, json: Buffer, offset: number) => void;
  /** Scan only this many bytes (a size measured by an earlier pass). */
  size?: number;
  /** JSON.parse every line (default: only when onRecord is given). */
  parse?: boolean;
  /**
   * Parse, and hand to onRecord, only the header and the records of these types: every
   * other line is checked as validateJournal checks it (checksum, seq, chain, terminal
   * rule), without a JSON.parse — for a reader that needs a few kinds of record of a long
   * journal. A line whose layout is not the writer's is parsed (and checked) in full.
   */
  parseTypes?: ReadonlySet<string>;
  /** Also hash the bytes scanned (`sha256` on a clean result). */
  digest?: boolean;
  /**
   * Lines that start before this byte offset are checked as validateJournal checks them
   * (checksum, seq, chain, terminal rule) but neither parsed nor handed to onRecord (the
   * header still sets `header`), and `prefixSha256` is the sha256 of the bytes before it:
   * for a reader that holds what those records say already (a fold snapshot), which it
   * may trust only if that digest is the one it recorded with them.
   */
  from?: number;
}

/** The running sha256 of a clean, digested scan, for a writer that goes on from it (hashStateOf). */
const hashStates = new WeakMap<ScanResult, Hash>();

// A copy of the sha256 state at the end of a clean scan made with `digest` (undefined for any other).
export function hashStateOf(scan: ScanResult): Hash | undefined {
  return hashStates.get(scan)?.copy();
}

/** One read of the file: a fresh buffer (never reused, so a line handed out stays intact). */
interface Chunk {
  bytes: Buffer;
  /** File offset of bytes[0]. */
  offset: number;
}

/**
 * Reads a file front to back in chunks, one read always in flight ahead of the chunk being
 * checked (the check of one chunk overlaps the read of the next). Holds at most two chunks.
 */
class ChunkReader {
  private pending: Promise<Chunk> | undefined;

  constructor(
    private readonly handle: FileHandle,
    private readonly size: number,
  ) {
    this.pending = size > 0 ? this.readAt(0) : undefined;
  }

  // The next chunk, or undefined at `size` (or where the file turned out shorter).
  async next(): Promise<Chunk | undefined> {
    if (this.pending === undefined) return undefined;
    const chunk = await this.pending;
    const end = chunk.offset + chunk.bytes.length;
    this.pending = chunk.bytes.length > 0 && end < this.size ? this.readAt(end) : undefined;
    return chunk.bytes.length > 0 ? chunk : undefined;
  }

  // Waits out a read still in flight (its errors are moot: the scan has its answer).
  async drain(): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    await pending?.catch(() => undefined);
  }

  private async readAt(offset: number): Promise<Chunk> {
    const bytes = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, this.size - offset));
    const { bytesRead } = await this.handle.read(bytes, 0, bytes.length, offset);
    return { bytes: bytes.subarray(0, bytesRead), offset };
  }
}

/**
 * Opens a journal to read it: a regular file only. A FIFO is opened without blocking (a
 * plain open waited for a writer forever) and, like a device or socket, refused with an
 * error naming it (thrown, as ENOENT is).
 */
export async function openRegular(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile()) throw new Error(`${path} is not a regular file (a FIFO, socket or device)`);
  } catch (e) {
    await handle.close();
    throw e;
  }
  return handle;
}

/**
 * Streams a journal once, checking every line, and returns what it found. Never holds
 * more than one line (at most 1 MiB) plus two read chunks in memory. Throws only for
 * errors opening or reading the file (ENOENT, EISDIR, EIO).
 */
export async function scanJournal(path: string, options: ScanOptions = {}): Promise<ScanResult> {
  const handle = await openRegular(path);
  let reader: ChunkReader | undefined;
  try {
    const size = options.size ?? (await handle.stat()).size;
    const checker = new LineChecker();
    const types = options.parseTypes;
    const parse = types ?? options.parse ?? options.onRecord !== undefined;
    const onRecord = options.onRecord;
    const hash = options.digest ? createHash('sha256') : undefined;
    const from = options.from ?? -1;
    // The prefix's digest: the whole file's hash copied where the prefix ends, or, without
    // one, a hash of its own (undefined once taken, or with no `from`).
    let prefix: Hash | undefined = options.from !== undefined ? (hash ?? createHash('sha256')) : undefined;
    let prefixSha256: string | undefined;
    const hashChunk = (bytes: Buffer, offset: number): void => {
      if (prefix !== undefined && offset + bytes.length >= from) {
        const cut = from - offset;
        prefix.update(bytes.subarray(0, cut));
        prefixSha256 = (prefix === hash ? prefix.copy() : prefix).digest('hex');
        prefix = undefined;
        hash?.update(bytes.subarray(cut));
        return;
      }
      if (prefix !== undefined && prefix !== hash) prefix.update(bytes);
      hash?.update(bytes);
    };
    const result = (status: JournalStatus, validEnd: number): ScanResult => ({
      status,
      count: checker.count,
      lastSeq: checker.lastSeq,
      lastCrc: checker.lastCrc,
      terminal: checker.terminal,
      ...(checker.header ? { header: checker.header } : {}),
      validEnd,
      size,
      ...(prefixSha256 !== undefined ? { prefixSha256 } : {}),
    });
    // What is wrong from byte `at` on: a torn tail, or corruption.
    const judgeTail = async (at: number, problem: Problem | undefined): Promise<ScanResult> => {
      const verdict = await classifyTail(handle, at, size, checker.count === 0, problem);
      if (verdict.kind === 'torn') return result({ kind: 'torn_tail', offset: at, detail: verdict.detail }, at);
      return result(
        { kind: 'corrupt', offset: at, seq: verdict.seq, reason: verdict.reason, expectedSeq: checker.lastSeq + 1, detail: verdict.detail },
        at,
      );
    };
    // Checks the line buf[start..end) found at file offset `offset`: undefined when it is a
    // valid record, else the scan's end (a line holding zero bytes may be a torn tail).
    const checkLine = (buf: Buffer, start: number, end: number, offset: number): Promise<ScanResult> | undefined => {
      const before = offset < from;
      const checked = checker.check(buf, start, end, before ? false : parse);
      if ('reason' in checked) {
        // Zero bytes mean blocks that never reached the disk: maybe a torn tail.
        if (buf.subarray(start, end).indexOf(NUL) >= 0) return judgeTail(offset, checked);
        return Promise.resolve(
          result(
            { kind: 'corrupt', offset, seq: checked.seq, reason: checked.reason, expectedSeq: checker.lastSeq + 1, detail: checked.detail },
            offset,
          ),
        );
      }
      const record = checked.record;
      if (record !== undefined && onRecord !== undefined && !before && (types === undefined || record.seq === 0 || types.has(record.type)))
        onRecord(record, checked.json!, offset);
      return undefined;
    };

    reader = new ChunkReader(handle, size);
    // The unfinished line at the end of the chunks read so far (lines are checked where they
    // lie in their chunk; only one that spans chunks is copied into a buffer of its own).
    let carry: Buffer = Buffer.alloc(0);
    let carryOffset = 0;
    let scanned = 0;
    for (let chunk = await reader.next(); chunk !== undefined; chunk = await reader.next()) {
      const bytes = chunk.bytes;
      hashChunk(bytes, chunk.offset);
      scanned = chunk.offset + bytes.length;
      let start = 0;
      if (carry.length > 0) {
        const nl = bytes.indexOf(NL);
        if (nl < 0) {
          carry = Buffer.concat([carry, bytes]);
          if (carry.length >= MAX_LINE_BYTES) return await judgeTail(carryOffset, undefined);
          continue;
        }
        const line = Buffer.concat([carry, bytes.subarray(0, nl)]);
        const ended = checkLine(line, 0, line.length, carryOffset);
        if (ended) return await ended;
        start = nl + 1;
      }
      for (let nl = bytes.indexOf(NL, start); nl >= 0; nl = bytes.indexOf(NL, start)) {
        const ended = checkLine(bytes, start, nl, chunk.offset + start);
        if (ended) return await ended;
        start = nl + 1;
      }
      carry = bytes.subarray(start);
      carryOffset = chunk.offset + start;
      if (carry.length >= MAX_LINE_BYTES) return await judgeTail(carryOffset, undefined);
    }
    if (carry.length > 0) return await judgeTail(carryOffset, undefined);
    if (checker.count === 0) return result({ kind: 'torn_tail', offset: 0, detail: 'empty' }, 0);
    if (hash !== undefined && scanned === size) {
      const state = hash.copy();
      const clean = { ...result({ kind: 'clean' }, size), sha256: hash.digest('hex') };
      hashStates.set(clean, state);
      return clean;
    }
    return result({ kind: 'clean' }, size);
  } finally {
    await reader?.drain();
    await handle.close();
  }
}
