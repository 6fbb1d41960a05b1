import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fsyncDirectory, type JournalFs } from './fs.js';

/** What repairing a torn tail did. */
export interface TailRepair {
  /** The journal's new length: where the torn line started. */
  truncatedAt: number;
  /** A copy of the whole file as it was, torn line included. */
  brokenCopy: string;
  droppedBytes: number;
}

// Copies the journal aside as FILE.broken (or FILE.broken.N: an older copy is evidence
// too and is never overwritten), durably, appearing whole or not at all.
async function saveBrokenCopy(path: string, journalFs: JournalFs): Promise<string> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.broken.tmp`);
  await copyFile(path, temp, constants.COPYFILE_EXCL);
  try {
    const fd = await journalFs.open(temp, constants.O_RDONLY);
    try {
      await journalFs.fsync(fd);
    } finally {
      await journalFs.close(fd);
    }
    for (let n = 0; ; n++) {
      const target = n === 0 ? `${path}.broken` : `${path}.broken.${n}`;
      try {
        await link(temp, target);
        await fsyncDirectory(dir, journalFs);
        return target;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 1000) throw e;
      }
    }
  } finally {
    await unlink(temp).catch(() => {});
  }
}

// Keeps a .broken copy, then cuts the journal back to its last whole record and syncs.
// The caller holds the writer lock.
export async function truncateTornTail(path: string, validEnd: number, size: number, journalFs: JournalFs): Promise<TailRepair> {
  const brokenCopy = await saveBrokenCopy(path, journalFs);
  const fd = await journalFs.open(path, constants.O_WRONLY);
  try {
    await journalFs.ftruncate(fd, validEnd);
    await journalFs.fsync(fd);
  } finally {
    await journalFs.close(fd);
  }
  return { truncatedAt: validEnd, brokenCopy, droppedBytes: size - validEnd };
}
