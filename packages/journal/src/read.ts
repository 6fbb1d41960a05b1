import type { JournalHeader, JournalRecord } from './format.js';
import { LineChecker } from './line-check.js';
import { openRegular, scanJournal } from './scan.js';
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
 * checked, as a scan checks it). Undefined when there is no whole, valid header (empty,
 * torn, corrupt, or a header line longer than 64 KiB); throws only as scanJournal does
 * (ENOENT, EIO…). One open and one read: a slug's run list reads every run's header.
 */
export async function readHeader(path: string): Promise<HeaderRead | undefined> {
  const handle = await openRegular(path);
  let probe: Buffer;
  try {
    const buffer = Buffer.allocUnsafe(HEADER_PROBE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    probe = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const lineEnd = probe.indexOf(0x0a);
  if (lineEnd < 0) return undefined;
  const checker = new LineChecker();
  const checked = checker.check(probe, 0, lineEnd, true);
  if ('reason' in checked || checker.header === undefined || checked.record === undefined) return undefined;
  return { header: checker.header, ts: checked.record.ts };
}
