import { crc32 } from 'node:zlib';
import { isPlainObject } from '@runplan/common';

/** The on-disk format version written in every header; readers refuse any other. */
export const FORMAT_VERSION = 1;
/** Largest line (checksum prefix, JSON and newline) a journal accepts: 1 MiB. */
export const MAX_LINE_BYTES = 1 << 20;
/** `prev` of the header: there is no line before it. */
export const GENESIS_PREV = '00000000';
export const HEADER_TYPE = 'journal-header';
export const REPAIRED_TYPE = 'journal-repaired';

/**
 * One journal line, parsed. `seq` counts from 0 (the header) with no gaps; `prev` is the
 * checksum of the previous line, so lines cannot be dropped, reordered or spliced in
 * from another journal (each header carries a random salt, so two journals never share
 * a chain). `terminal: true` marks the one receipt after which nothing may follow.
 */
export interface JournalRecord {
  seq: number;
  prev: string;
  ts: string;
  type: string;
  data: Record<string, unknown>;
  terminal?: true;
}

/** `data` of the header record (seq 0). */
export interface JournalHeader {
  format: number;
  runId: string;
  salt: string;
  /** Fields the application asked the header to carry (`openWriter({ headerFields })`). */
  [field: string]: unknown;
}

/** Header keys the journal itself writes: `headerFields` may not set them. */
export { isPlainObject };

export const HEADER_KEYS: readonly string[] = ['format', 'runId', 'salt'];

// The checksum of a line's JSON bytes as 8 lowercase hex digits.
export function crcHex(json: Buffer | string, previous?: number): string {
  return crc32(json, previous).toString(16).padStart(8, '0');
}

/** A record serialized the one way the journal writes it: seq and prev first. */
export interface EncodedLine {
  bytes: Buffer;
  crc: string;
}

// Serializes a record as `<crc32> <json>\n`; the key order is fixed so a reader can find
// seq and prev at the front of every line.
export function encodeRecord(record: JournalRecord): EncodedLine {
  const ordered: JournalRecord = { seq: record.seq, prev: record.prev, ts: record.ts, type: record.type, data: record.data };
  if (record.terminal) ordered.terminal = true;
  return encodeOrdered(ordered);
}

/**
 * encodeRecord of a record whose own keys are already seq, prev, ts, type, data and (only
 * when true) terminal, in that order, and nothing else: the writer builds its records so,
 * and skips the copy. One buffer, the checksum written over its placeholder.
 */
export function encodeOrdered(record: JournalRecord): EncodedLine {
  const bytes = Buffer.from(`${GENESIS_PREV} ${JSON.stringify(record)}\n`, 'utf8');
  const crc = crcHex(bytes.subarray(9, bytes.length - 1));
  bytes.write(crc, 0, 'latin1');
  return { bytes, crc };
}

const allowedKeys = new Set(['seq', 'prev', 'ts', 'type', 'data', 'terminal']);
const hex8 = /^[0-9a-f]{8}$/;

// Why a parsed value is not a well-formed record, or undefined when it is one.
export function recordShapeProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'the line is not a JSON object';
  const keys = Object.keys(value);
  if (keys[0] !== 'seq' || keys[1] !== 'prev') return 'seq and prev are not the first keys';
  for (const key of keys) if (!allowedKeys.has(key)) return `unknown key "${key}"`;
  const { seq, prev, ts, type, data, terminal } = value;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return 'seq is not a non-negative integer';
  if (typeof prev !== 'string' || !hex8.test(prev)) return 'prev is not 8 lowercase hex digits';
  if (typeof ts !== 'string' || ts === '') return 'ts is not a string';
  if (typeof type !== 'string' || type === '') return 'type is not a non-empty string';
  if (!isPlainObject(data)) return 'data is not an object';
  if (terminal !== undefined && terminal !== true) return 'terminal is not true';
  return undefined;
}

// Why a header record's data is not a format-1 header, or undefined when it is one.
export function headerProblem(record: JournalRecord): string | undefined {
  if (record.type !== HEADER_TYPE) return `the first record is "${record.type}", not a ${HEADER_TYPE}`;
  if (record.seq !== 0) return `the header has seq ${record.seq}, not 0`;
  if (record.prev !== GENESIS_PREV) return `the header's prev is not ${GENESIS_PREV}`;
  if (record.terminal) return 'the header is marked terminal';
  const { format, runId, salt } = record.data;
  if (format !== FORMAT_VERSION) return `unsupported format ${JSON.stringify(format)} (this journal reads format ${FORMAT_VERSION})`;
  if (typeof runId !== 'string' || runId === '') return 'the header has no runId';
  if (typeof salt !== 'string' || salt === '') return 'the header has no salt';
  return undefined;
}

const identifier = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

// Run ids are identifiers (DESIGN "Templates"): safe in paths and branch names.
export function isIdentifier(text: string): boolean {
  return identifier.test(text) && text !== '.' && text !== '..';
}

// An event type: a letter or digit, then letters, digits, `.`, `_`, `:`, `-` (runplan's are kebab-case).
export function typeProblem(type: unknown): string | undefined {
  if (typeof type !== 'string' || type === '') return 'the record type must be a non-empty string';
  if (type.length > 200) return 'the record type is longer than 200 characters';
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(type)) return `the record type "${type}" may hold only letters, digits, ".", "_", ":" and "-"`;
  return undefined;
}
