import { open, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { ProcessIdentity } from '@runplan/settle';
import type { DiskReason } from '../events/reasons.js';

// What a run keeps on disk so that a full disk still gets an answer: a reserve for its last
// records, and the note an exit 5 leaves for the resume.

/**
 * Room kept for the run's last words: a file of this many bytes in the run dir, created
 * before the journal is opened and deleted at the first disk failure, so the records that
 * close the attempts and the receipt still fit on a file system that just filled up.
 */
export const RESERVE_BYTES = 256 * 1024;

export function reservePath(runDir: string): string {
  return join(runDir, 'disk-reserve');
}

// Creates the reserve (written, not sparse, and synced) unless it is already whole.
export async function makeReserve(runDir: string): Promise<void> {
  const path = reservePath(runDir);
  try {
    if ((await stat(path)).size >= RESERVE_BYTES) return;
  } catch {
    // Not there yet.
  }
  const handle = await open(path, 'w', 0o600);
  try {
    await handle.write(Buffer.alloc(RESERVE_BYTES));
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

// Gives the reserve's space back to the file system (nothing happens when it is gone).
export async function releaseReserve(runDir: string): Promise<void> {
  await unlink(reservePath(runDir)).catch(() => undefined);
}

/**
 * Left in the run dir by a coordinator that exits 5 (the journal refused a write), so the
 * coordinator that resumes journals it as `journal-failed`, not as a crash: it uses up no
 * crash allowance. Only the coordinator that last drove the run can have written it.
 */
export interface JournalFailureNote {
  coordinator: ProcessIdentity;
  failedAt: string;
  /** disk_full / io_error when the journal's write failed for the disk; null otherwise. */
  reason: DiskReason | null;
  errno: string | null;
  path: string;
  message: string;
}

export function journalFailureNotePath(runDir: string): string {
  return join(runDir, 'journal-failed.json');
}

// Writes the note (best effort: false when even that cannot be written).
export async function writeJournalFailureNote(runDir: string, note: JournalFailureNote): Promise<boolean> {
  try {
    await writeFileAtomic(journalFailureNotePath(runDir), JSON.stringify(note) + '\n', { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

// The note, when there is one that names `coordinator` (the run's last coordinator).
export async function readJournalFailureNote(runDir: string, coordinator: ProcessIdentity | null): Promise<JournalFailureNote | undefined> {
  let note: Partial<JournalFailureNote>;
  try {
    note = JSON.parse(await readFile(journalFailureNotePath(runDir), 'utf8')) as Partial<JournalFailureNote>;
  } catch {
    return undefined;
  }
  const by = note.coordinator;
  if (coordinator === null || by === undefined || by === null || typeof note.path !== 'string' || typeof note.message !== 'string')
    return undefined;
  if (
    by.pid !== coordinator.pid ||
    by.startTime !== coordinator.startTime ||
    by.bootId !== coordinator.bootId ||
    by.host !== coordinator.host
  )
    return undefined;
  return note as JournalFailureNote;
}

export async function clearJournalFailureNote(runDir: string): Promise<void> {
  await unlink(journalFailureNotePath(runDir)).catch(() => undefined);
}
