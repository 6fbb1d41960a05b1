import { open } from 'node:fs/promises';
import type { JournalHeader, JournalRecord } from './format.js';
import { scanJournal } from './scan.js';
import type { JournalStatus } from './status.js';

/**
 * Reads every valid record in one streaming pass. On a torn tail or corruption, `records`
 * is the valid prefix and `status` says where it ends and why; callers that act on state
 * must check `status` (a corrupt journal fails closed). Throws on I/O errors (ENOENT…).
 */
export async function readJournal(path: string): Promise<{ records: JournalRecord[]; status: JournalStatus }> {
  const records: JournalRecord[] = [];
  const scan = await scanJournal(path, { onRecord: (record) => records.push(record) });
  return { records, status: scan.status };
}

/** Validates in one streaming pass without keeping records (a 1e5-record journal is fine). */
export async function validateJournal(
  path: string,
): Promise<{ status: JournalStatus; count: number; lastSeq: number; terminal: boolean; runId?: string }> {
  const scan = await scanJournal(path);
  return {
    status: scan.status,
    count: scan.count,
    lastSeq: scan.lastSeq,
    terminal: scan.terminal,
    ...(scan.header ? { runId: scan.header.runId } : {}),
  };
}

/** A journal's first record, checked as a scan checks it: its header data and when it was written. */
export interface HeaderRead {
  header: JournalHeader;
  /** The header record's `ts`: when the journal was created. */
  ts: string;
}

/** How many bytes readHeader looks at for the first line: a header is far smaller. */
const HEADER_PROBE_BYTES = 64 * 1024;

/**
 * Reads only a journal's header line (the first `\n`-ended line, checksum and header rules
 * checked). Undefined when there is no whole, valid header (empty, torn, corrupt, or a
 * header line longer than 64 KiB); throws only as scanJournal does (ENOENT, EIO…).
 */
export async function readHeader(path: string): Promise<HeaderRead | undefined> {
  const handle = await open(path, 'r');
  let lineEnd: number;
  try {
    const buffer = Buffer.allocUnsafe(HEADER_PROBE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    lineEnd = buffer.subarray(0, bytesRead).indexOf(0x0a);
  } finally {
    await handle.close();
  }
  if (lineEnd < 0) return undefined;
  let first: JournalRecord | undefined;
  const scan = await scanJournal(path, { size: lineEnd + 1, onRecord: (record) => (first ??= record) });
  if (scan.header === undefined || first === undefined) return undefined;
  return { header: scan.header, ts: first.ts };
}
