import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import {
  crcHex,
  GENESIS_PREV,
  HEADER_TYPE,
  headerProblem,
  MAX_LINE_BYTES,
  recordShapeProblem,
  type JournalHeader,
  type JournalRecord,
} from './format.js';
import type { CorruptReason, JournalStatus } from './status.js';

const CHUNK_BYTES = 256 * 1024;
/** Blocks that never reached the disk read back as zeros, whole sectors at a time. */
const SECTOR_BYTES = 512;
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
}

export interface ScanOptions {
  /** Called for every valid record, in order, with its exact JSON bytes. */
  onRecord?: (record: JournalRecord, json: Buffer, offset: number) => void;
  /** Scan only this many bytes (a size measured by an earlier pass). */
  size?: number;
  /** JSON.parse every line (default: only when onRecord is given). */
  parse?: boolean;
  /** Also hash the bytes scanned (`sha256` on a clean result). */
  digest?: boolean;
}

/** The front of every encoded record: seq and prev first, then ts. */
const FRONT = /^\{"seq":(0|[1-9]\d{0,15}),"prev":"([0-9a-f]{8})","ts":"/;
/** How an encoded terminal receipt ends (data is an object, so its own keys end in `}}`). */
const TERMINAL_END = ',"terminal":true}';

interface Problem {
  reason: CorruptReason;
  detail: string;
  seq: number | null;
}

// Checks lines one at a time against everything the lines before them established.
class LineChecker {
  count = 0;
  lastSeq = -1;
  lastCrc = GENESIS_PREV;
  terminal = false;
  header: JournalHeader | undefined;

  /**
   * Checks one line. With `parse` false (validation) a line whose checksum matches is read
   * without a full JSON.parse: seq and prev sit at the front of every line the writer
   * encodes and a terminal receipt ends with `,"terminal":true}`; only the header, and any
   * line that breaks a rule, is parsed in full (to name the problem precisely).
   */
  check(line: Buffer, parse: boolean): Problem | { record: JournalRecord | undefined; json: Buffer } {
    if (!parse && this.count > 0) {
      const fast = this.checkUnparsed(line);
      if (fast) return fast;
    }
    return this.checkParsed(line);
  }

  // The validation fast path; undefined sends the line through the full check.
  private checkUnparsed(line: Buffer): { record: undefined; json: Buffer } | undefined {
    if (line.length < 10 || line.length + 1 > MAX_LINE_BYTES || line[line.length - 1] === 0x0d || !hasChecksumPrefix(line))
      return undefined;
    const json = line.subarray(9);
    if (crc32(json) !== Number.parseInt(line.toString('latin1', 0, 8), 16)) return undefined;
    const match = FRONT.exec(json.toString('latin1', 0, Math.min(json.length, 64)));
    if (!match) return undefined;
    const seq = Number(match[1]);
    const prev = match[2]!;
    if (this.terminal || seq !== this.lastSeq + 1 || prev !== this.lastCrc) return undefined;
    this.count += 1;
    this.lastSeq = seq;
    this.lastCrc = line.toString('latin1', 0, 8);
    if (json.length > TERMINAL_END.length && json.toString('latin1', json.length - TERMINAL_END.length) === TERMINAL_END)
      this.terminal = true;
    return { record: undefined, json };
  }

  private checkParsed(line: Buffer): Problem | { record: JournalRecord; json: Buffer } {
    const problem = (reason: CorruptReason, detail: string, seq: number | null = null): Problem => ({ reason, detail, seq });
    if (this.count === 0 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf)
      return problem('bom', 'the file starts with a UTF-8 byte order mark (saved by an editor?)');
    if (line[line.length - 1] === 0x0d)
      return problem('crlf', 'the line ends with CR: the file was saved with CRLF line endings (by an editor?)');
    if (line.length + 1 > MAX_LINE_BYTES)
      return problem('record_too_large', `the line is ${line.length + 1} bytes, over the ${MAX_LINE_BYTES}-byte limit`);
    if (!hasChecksumPrefix(line))
      return problem('foreign_line', 'the line has no "<crc32> " checksum prefix: it was not written by journal');
    const prefix = line.toString('latin1', 0, 8);
    const json = line.subarray(9);
    // The prefix is 8 lowercase hex digits (checked above): compared as a number.
    const actual = crc32(json);
    if (actual !== Number.parseInt(prefix, 16))
      return problem('crc_mismatch', `the line's checksum is ${prefix} but its bytes sum to ${crcHex(json)}`, peekSeq(json));
    let value: unknown;
    try {
      value = JSON.parse(json.toString('utf8'));
    } catch {
      return problem('not_json', 'the checksum matches but the line is not JSON');
    }
    const shape = recordShapeProblem(value);
    if (shape !== undefined) return problem('bad_record', shape, peekSeq(json));
    const record = value as JournalRecord;
    const broken = this.sequenceProblem(record);
    if (broken) return broken;
    this.count += 1;
    this.lastSeq = record.seq;
    this.lastCrc = prefix;
    if (record.terminal) this.terminal = true;
    return { record, json };
  }

  // The order and chain rules: header first, seq contiguous, prev chained, one terminal last.
  private sequenceProblem(record: JournalRecord): Problem | undefined {
    const seq = record.seq;
    if (this.count === 0) {
      const problem = headerProblem(record);
      if (problem === undefined) {
        this.header = record.data as unknown as JournalHeader;
        return undefined;
      }
      return { reason: record.type === HEADER_TYPE ? 'bad_header' : 'no_header', detail: problem, seq };
    }
    if (this.terminal)
      return record.terminal
        ? { reason: 'second_terminal', detail: `a second terminal record follows the terminal record at seq ${this.lastSeq}`, seq }
        : { reason: 'after_terminal', detail: `a record follows the terminal record at seq ${this.lastSeq}`, seq };
    if (record.type === HEADER_TYPE)
      return { reason: 'foreign_line', detail: 'a second journal-header: lines of another journal were appended', seq };
    const expected = this.lastSeq + 1;
    if (seq < expected)
      return {
        reason: 'seq_repeat',
        detail: `seq ${seq} repeats or goes back (expected ${expected}): a duplicated or reordered line`,
        seq,
      };
    if (seq > expected)
      return { reason: 'seq_gap', detail: `seq jumps from ${this.lastSeq} to ${seq}: a line is missing or out of order`, seq };
    if (record.prev !== this.lastCrc)
      return {
        reason: 'chain_broken',
        detail: `prev ${record.prev} is not the previous line's checksum ${this.lastCrc}: the line comes from another journal or replaced one`,
        seq,
      };
    return undefined;
  }
}

function isLowerHex(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66));
}

function hasChecksumPrefix(line: Buffer): boolean {
  if (line.length < 10 || line[8] !== 0x20) return false;
  for (let i = 0; i < 8; i++) if (!isLowerHex(line[i])) return false;
  return true;
}

// The seq of a line whose checksum failed, read from its front if it is still legible.
function peekSeq(json: Buffer): number | null {
  const match = /^\{"seq":(\d{1,15}),/.exec(json.toString('latin1', 0, 32));
  return match ? Number(match[1]) : null;
}

/**
 * Streams a journal once, checking every line, and returns what it found. Never holds
 * more than one line (at most 1 MiB) plus one read chunk in memory. Throws only for
 * errors opening or reading the file (ENOENT, EISDIR, EIO).
 */
export async function scanJournal(path: string, options: ScanOptions = {}): Promise<ScanResult> {
  const handle = await open(path, 'r');
  try {
    const size = options.size ?? (await handle.stat()).size;
    const checker = new LineChecker();
    const parse = options.parse ?? options.onRecord !== undefined;
    const result = (status: JournalStatus, validEnd: number): ScanResult => ({
      status,
      count: checker.count,
      lastSeq: checker.lastSeq,
      lastCrc: checker.lastCrc,
      terminal: checker.terminal,
      ...(checker.header ? { header: checker.header } : {}),
      validEnd,
      size,
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

    const hash = options.digest ? createHash('sha256') : undefined;
    // Each read lands in a fresh buffer behind the bytes of the unfinished line before it
    // (a line handed to onRecord is never overwritten), so only that carry is copied.
    let carry: Buffer = Buffer.alloc(0);
    let carryOffset = 0;
    let readOffset = 0;
    while (readOffset < size) {
      const want = Math.min(CHUNK_BYTES, size - readOffset);
      const chunk = Buffer.allocUnsafe(carry.length + want);
      carry.copy(chunk, 0);
      const { bytesRead } = await handle.read(chunk, carry.length, want, readOffset);
      if (bytesRead === 0) break;
      hash?.update(chunk.subarray(carry.length, carry.length + bytesRead));
      readOffset += bytesRead;
      const buffer = chunk.subarray(0, carry.length + bytesRead);
      let start = 0;
      for (let nl = buffer.indexOf(NL, start); nl >= 0; nl = buffer.indexOf(NL, start)) {
        const line = buffer.subarray(start, nl);
        const offset = carryOffset + start;
        const checked = checker.check(line, parse);
        if ('reason' in checked) {
          // Zero bytes mean blocks that never reached the disk: maybe a torn tail.
          if (line.indexOf(NUL) >= 0) return await judgeTail(offset, checked);
          return result(
            { kind: 'corrupt', offset, seq: checked.seq, reason: checked.reason, expectedSeq: checker.lastSeq + 1, detail: checked.detail },
            offset,
          );
        }
        if (checked.record) options.onRecord?.(checked.record, checked.json, offset);
        start = nl + 1;
      }
      carry = buffer.subarray(start);
      carryOffset += start;
      if (carry.length >= MAX_LINE_BYTES) return await judgeTail(carryOffset, undefined);
    }
    if (carry.length > 0) return await judgeTail(carryOffset, undefined);
    if (checker.count === 0) return result({ kind: 'torn_tail', offset: 0, detail: 'empty' }, 0);
    if (hash !== undefined && readOffset === size) return { ...result({ kind: 'clean' }, size), sha256: hash.digest('hex') };
    return result({ kind: 'clean' }, size);
  } finally {
    await handle.close();
  }
}

type TailVerdict = { kind: 'torn'; detail: string } | { kind: 'corrupt'; reason: CorruptReason; detail: string; seq: number | null };

/**
 * Decides whether everything from byte `at` (the first line that is not a valid record)
 * to the end is the remains of one interrupted write, which is all a crash can leave:
 *  - the final line with no newline that could still become a record (a prefix of one),
 *  - or zero bytes where whole sectors never reached the disk: each run of zeros starts
 *    at `at` or on a sector boundary and ends on one or at the end of the file, and no
 *    whole checksummed line follows.
 * Anything else — a whole line failing its checksum even when last, a complete record
 * followed by stray bytes, zeros inside a line — is corruption.
 */
async function classifyTail(
  handle: FileHandle,
  at: number,
  size: number,
  atHeader: boolean,
  firstProblem: Problem | undefined,
): Promise<TailVerdict> {
  let anyNul = false;
  let zerosExplained = true;
  let runStart = -1;
  let firstLineEnd = -1;
  const firstLine: Buffer[] = [];
  let firstLineBytes = 0;
  let later: Buffer[] = [];
  let laterBytes = 0;
  let laterValid = false;

  const endLaterLine = () => {
    if (laterBytes <= MAX_LINE_BYTES) {
      const line = Buffer.concat(later);
      if (hasChecksumPrefix(line) && line.indexOf(NUL) < 0 && crcHex(line.subarray(9)) === line.toString('latin1', 0, 8)) laterValid = true;
    }
    later = [];
    laterBytes = 0;
  };

  for (let offset = at; offset < size; ) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - offset));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
    if (bytesRead === 0) break;
    const bytes = chunk.subarray(0, bytesRead);
    let segmentStart = 0;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i]!;
      const position = offset + i;
      if (byte === NUL) {
        anyNul = true;
        if (runStart < 0) {
          runStart = position;
          if (position !== at && position % SECTOR_BYTES !== 0) zerosExplained = false;
        }
      } else if (runStart >= 0) {
        if (position % SECTOR_BYTES !== 0) zerosExplained = false;
        runStart = -1;
      }
      if (byte === NL) {
        const segment = bytes.subarray(segmentStart, i);
        if (firstLineEnd < 0) {
          firstLineEnd = position;
          if (firstLineBytes <= MAX_LINE_BYTES) firstLine.push(segment);
          firstLineBytes += segment.length;
        } else {
          if (laterBytes <= MAX_LINE_BYTES) later.push(segment);
          laterBytes += segment.length;
          endLaterLine();
        }
        segmentStart = i + 1;
      }
    }
    const rest = bytes.subarray(segmentStart);
    if (firstLineEnd < 0) {
      if (firstLineBytes <= MAX_LINE_BYTES) firstLine.push(Buffer.from(rest));
      firstLineBytes += rest.length;
    } else {
      if (laterBytes <= MAX_LINE_BYTES) later.push(Buffer.from(rest));
      laterBytes += rest.length;
    }
    offset += bytesRead;
  }
  // A run of zeros reaching the end of the file ends "on a boundary" by definition.

  if (anyNul) {
    if (zerosExplained && !laterValid) return { kind: 'torn', detail: 'nul_bytes' };
    return { kind: 'corrupt', reason: 'nul_bytes', detail: 'zero bytes inside the journal that are not a zero-filled tail', seq: null };
  }
  if (firstLineEnd >= 0) {
    // A whole line (too long to check): only a NUL-free unterminated tail can be torn.
    return {
      kind: 'corrupt',
      reason: firstProblem?.reason ?? 'record_too_large',
      detail: firstProblem?.detail ?? `the line is over the ${MAX_LINE_BYTES}-byte limit`,
      seq: firstProblem?.seq ?? null,
    };
  }
  if (firstLineBytes + 1 > MAX_LINE_BYTES)
    return { kind: 'corrupt', reason: 'record_too_large', detail: `the last line is over the ${MAX_LINE_BYTES}-byte limit`, seq: null };
  return unterminatedVerdict(Buffer.concat(firstLine), atHeader);
}

// Whether a final line without its newline is a prefix of a record (torn) or not.
function unterminatedVerdict(tail: Buffer, atHeader: boolean): TailVerdict {
  const corrupt = (reason: CorruptReason, detail: string): TailVerdict => ({ kind: 'corrupt', reason, detail, seq: null });
  if (atHeader && tail[0] === 0xef) return corrupt('bom', 'the file starts with a UTF-8 byte order mark (saved by an editor?)');
  if (tail.indexOf(0x0d) >= 0)
    return corrupt('crlf', 'the last line holds a CR: the file was saved with CRLF line endings (by an editor?)');
  for (let i = 0; i < Math.min(8, tail.length); i++)
    if (!isLowerHex(tail[i]))
      return corrupt('foreign_line', 'the last line has no "<crc32> " checksum prefix: it was not written by journal');
  if (tail.length > 8 && tail[8] !== 0x20)
    return corrupt('foreign_line', 'the last line has no "<crc32> " checksum prefix: it was not written by journal');
  if (tail.length > 9 && tail[9] !== 0x7b) return corrupt('foreign_line', 'the last line is not a JSON object after its checksum');
  if (tail.length > 10) {
    // A complete record followed by anything but its newline cannot come from a crash.
    const prefix = tail.toString('latin1', 0, 8);
    let crc = 0;
    let from = 9;
    for (let close = tail.indexOf(0x7d, from); close >= 0; close = tail.indexOf(0x7d, close + 1)) {
      crc = crc32(tail.subarray(from, close + 1), crc);
      from = close + 1;
      if (crc.toString(16).padStart(8, '0') === prefix && close + 1 < tail.length)
        return corrupt('missing_newline', 'a complete record is followed by stray bytes instead of its newline');
    }
  }
  return { kind: 'torn', detail: 'no_newline' };
}
