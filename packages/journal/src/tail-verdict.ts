import type { FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { crcHex, MAX_LINE_BYTES } from './format.js';
import { hasChecksumPrefix, isLowerHex, type Problem } from './line-check.js';
import type { CorruptReason } from './status.js';

const CHUNK_BYTES = 256 * 1024;
/** Blocks that never reached the disk read back as zeros, whole sectors at a time. */
const SECTOR_BYTES = 512;
const NL = 0x0a;
const NUL = 0x00;

export type TailVerdict = { kind: 'torn'; detail: string } | { kind: 'corrupt'; reason: CorruptReason; detail: string; seq: number | null };

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
export async function classifyTail(
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
