import type { JournalRecord } from './format.js';
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
export async function validateJournal(path: string): Promise<{ status: JournalStatus; count: number; lastSeq: number; terminal: boolean; runId?: string }> {
  const scan = await scanJournal(path);
  return {
    status: scan.status,
    count: scan.count,
    lastSeq: scan.lastSeq,
    terminal: scan.terminal,
    ...(scan.header ? { runId: scan.header.runId } : {}),
  };
}
