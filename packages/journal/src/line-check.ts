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
import type { CorruptReason } from './status.js';

/** Why a line is not the next valid record. */
export interface Problem {
  reason: CorruptReason;
  detail: string;
  seq: number | null;
}

/** A line that passed: the record (undefined when validation did not parse it) and its JSON bytes. */
export interface Checked {
  record: JournalRecord | undefined;
  json: Buffer | undefined;
}

/** What the validation fast path returns for a line it accepted without parsing it. */
const UNPARSED: Checked = Object.freeze({ record: undefined, json: undefined });

const CR = 0x0d;
const SPACE = 0x20;
const COMMA = 0x2c;
const ZERO = 0x30;
const NINE = 0x39;
/** Every encoded record starts `{"seq":`, then seq, then `,"prev":"`, 8 hex digits and `","ts":"`. */
const SEQ_KEY = Buffer.from('{"seq":', 'latin1');
const PREV_KEY = Buffer.from(',"prev":"', 'latin1');
const TS_KEY = Buffer.from('","ts":"', 'latin1');
/** How an encoded terminal receipt ends (data is an object, so its own keys end in `}}`). */
const TERMINAL_END = Buffer.from(',"terminal":true}', 'latin1');
/** The most digits a seq the fast path reads may have (as the old `[1-9]\d{0,15}`). */
const MAX_SEQ_DIGITS = 16;

// The value of one lowercase hex digit, or -1.
function hexDigit(byte: number): number {
  if (byte >= ZERO && byte <= NINE) return byte - ZERO;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

// The 8 lowercase hex digits at buf[at..at+8) as a number, or -1 when they are not that.
function hex8At(buf: Buffer, at: number): number {
  let value = 0;
  for (let i = at; i < at + 8; i++) {
    const digit = hexDigit(buf[i]!);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// Whether buf holds `bytes` at `at`.
function bytesAt(buf: Buffer, at: number, bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false;
  return true;
}

export function isLowerHex(byte: number | undefined): boolean {
  return byte !== undefined && hexDigit(byte) >= 0;
}

export function hasChecksumPrefix(line: Buffer): boolean {
  return line.length >= 10 && line[8] === SPACE && hex8At(line, 0) >= 0;
}

// The seq of a line whose checksum failed, read from its front if it is still legible.
function peekSeq(json: Buffer): number | null {
  const match = /^\{"seq":(\d{1,15}),/.exec(json.toString('latin1', 0, 32));
  return match ? Number(match[1]) : null;
}

const hex = (crc: number): string => crc.toString(16).padStart(8, '0');

const QUOTE = 0x22;
/** What follows the ts of every line the writer encodes, before the type's name. */
const TYPE_KEY = Buffer.from('","type":"', 'latin1');
/** The most bytes a ts and a type name may take where the type is looked for (a ts is 24). */
const TS_MAX = 64;
const TYPE_MAX = 128;

// Whether the line's record type, read from its bytes as the writer lays them out, is not in
// `types`. False whenever the layout is not that: the line is then parsed in full.
function isOtherType(buf: Buffer, start: number, end: number, types: ReadonlySet<string>): boolean {
  let at = start + 9 + SEQ_KEY.length;
  while (at < end && buf[at]! >= ZERO && buf[at]! <= NINE) at++;
  if (!bytesAt(buf, at, PREV_KEY)) return false;
  const ts = at + PREV_KEY.length + 8 + TS_KEY.length;
  const tsEnd = buf.indexOf(QUOTE, ts);
  if (tsEnd < 0 || tsEnd - ts > TS_MAX || tsEnd + TYPE_KEY.length >= end || !bytesAt(buf, tsEnd, TYPE_KEY)) return false;
  const type = tsEnd + TYPE_KEY.length;
  const typeEnd = buf.indexOf(QUOTE, type);
  if (typeEnd < 0 || typeEnd >= end || typeEnd - type > TYPE_MAX) return false;
  for (const name of typeNames(types)) if (name.length === typeEnd - type && bytesAt(buf, type, name)) return false;
  return true;
}

/** Each type set's names as bytes, made once per set (a scan asks for every line). */
const namesOf = new WeakMap<ReadonlySet<string>, Buffer[]>();

function typeNames(types: ReadonlySet<string>): Buffer[] {
  let names = namesOf.get(types);
  if (names === undefined) {
    names = [...types].map((t) => Buffer.from(t, 'utf8'));
    namesOf.set(types, names);
  }
  return names;
}

// Checks lines one at a time against everything the lines before them established.
export class LineChecker {
  count = 0;
  lastSeq = -1;
  terminal = false;
  header: JournalHeader | undefined;
  /** The last valid line's checksum as a number (the fast path compares numbers). */
  private lastCrcValue = 0;
  /** The same as text, made only when asked for: the fast path never needs it. */
  private lastCrcText: string | undefined = GENESIS_PREV;

  /** Checksum of the last valid line (the next record's prev). */
  get lastCrc(): string {
    this.lastCrcText ??= hex(this.lastCrcValue);
    return this.lastCrcText;
  }

  /**
   * Checks the line buf[start..end) (its newline excluded). With `parse` false
   * (validation) a line whose checksum matches is read without a full JSON.parse: seq and
   * prev sit at the front of every line the writer encodes and a terminal receipt ends
   * with `,"terminal":true}`; only the header, and any line that breaks a rule, is parsed
   * in full (to name the problem precisely).
   */
  check(buf: Buffer, start: number, end: number, parse: boolean | ReadonlySet<string>): Problem | Checked {
    const full = parse === true || (parse !== false && !isOtherType(buf, start, end, parse));
    if (!full && this.count > 0 && this.acceptUnparsed(buf, start, end)) return UNPARSED;
    return this.checkParsed(buf.subarray(start, end));
  }

  // The validation fast path, on bytes only (no string is made); false sends the line
  // through the full check, which finds and names whatever is wrong.
  private acceptUnparsed(buf: Buffer, start: number, end: number): boolean {
    const length = end - start;
    if (length < 10 || length + 1 > MAX_LINE_BYTES || buf[end - 1] === CR || buf[start + 8] !== SPACE) return false;
    const crc = hex8At(buf, start);
    if (crc < 0) return false;
    const json = start + 9;
    if (this.terminal || !bytesAt(buf, json, SEQ_KEY)) return false;
    // seq: 0, or 1-9 followed by at most 15 digits, then `,"prev":"`.
    let at = json + SEQ_KEY.length;
    let seq = 0;
    const first = at;
    while (at < end && at - first < MAX_SEQ_DIGITS && buf[at]! >= ZERO && buf[at]! <= NINE) seq = seq * 10 + (buf[at++]! - ZERO);
    if (at === first || buf[at] !== COMMA || (buf[first] === ZERO && at - first > 1)) return false;
    if (seq !== this.lastSeq + 1 || !bytesAt(buf, at, PREV_KEY)) return false;
    at += PREV_KEY.length;
    if (at + 8 + TS_KEY.length > end || hex8At(buf, at) !== this.lastCrcValue || !bytesAt(buf, at + 8, TS_KEY)) return false;
    if (crc32(buf.subarray(json, end)) !== crc) return false;
    this.count += 1;
    this.lastSeq = seq;
    this.lastCrcValue = crc;
    this.lastCrcText = undefined;
    if (end - json > TERMINAL_END.length && bytesAt(buf, end - TERMINAL_END.length, TERMINAL_END)) this.terminal = true;
    return true;
  }

  private checkParsed(line: Buffer): Problem | Checked {
    const problem = (reason: CorruptReason, detail: string, seq: number | null = null): Problem => ({ reason, detail, seq });
    if (this.count === 0 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf)
      return problem('bom', 'the file starts with a UTF-8 byte order mark (saved by an editor?)');
    if (line[line.length - 1] === CR)
      return problem('crlf', 'the line ends with CR: the file was saved with CRLF line endings (by an editor?)');
    if (line.length + 1 > MAX_LINE_BYTES)
      return problem('record_too_large', `the line is ${line.length + 1} bytes, over the ${MAX_LINE_BYTES}-byte limit`);
    if (!hasChecksumPrefix(line))
      return problem('foreign_line', 'the line has no "<crc32> " checksum prefix: it was not written by journal');
    const prefix = hex8At(line, 0);
    const json = line.subarray(9);
    if (crc32(json) !== prefix)
      return problem('crc_mismatch', `the line's checksum is ${hex(prefix)} but its bytes sum to ${crcHex(json)}`, peekSeq(json));
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
    this.lastCrcValue = prefix;
    this.lastCrcText = undefined;
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
    // prev is 8 lowercase hex digits (recordShapeProblem): compared as a number.
    if (Number.parseInt(record.prev, 16) !== this.lastCrcValue)
      return {
        reason: 'chain_broken',
        detail: `prev ${record.prev} is not the previous line's checksum ${this.lastCrc}: the line comes from another journal or replaced one`,
        seq,
      };
    return undefined;
  }
}
