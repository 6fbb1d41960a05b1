import * as fs from 'node:fs';
import { promisify } from 'node:util';

/**
 * The file operations a writer performs, as a seam: tests inject one that counts
 * `fdatasync` calls or fails a write with EFBIG, and prove when appends resolve.
 */
export interface JournalFs {
  open(path: string, flags: string | number, mode?: number): Promise<number>;
  /** Returns the bytes written, which may be fewer than asked (e.g. at a file size limit). */
  write(fd: number, buffer: Buffer, offset: number, length: number): Promise<number>;
  fdatasync(fd: number): Promise<void>;
  fsync(fd: number): Promise<void>;
  ftruncate(fd: number, length: number): Promise<void>;
  close(fd: number): Promise<void>;
}

const pOpen = promisify(fs.open);
const pFdatasync = promisify(fs.fdatasync);
const pFsync = promisify(fs.fsync);
const pFtruncate = promisify(fs.ftruncate);
const pClose = promisify(fs.close);

/** The real file system. */
export const nodeJournalFs: JournalFs = {
  open: (path, flags, mode) => pOpen(path, flags, mode),
  // Synchronous: a write to the page cache takes microseconds, and through the thread pool
  // it cost a round trip of the event loop per batch. The fdatasync that waits on the disk
  // stays on the thread pool.
  write: async (fd, buffer, offset, length) => fs.writeSync(fd, buffer, offset, length),
  fdatasync: (fd) => pFdatasync(fd),
  fsync: (fd) => pFsync(fd),
  ftruncate: (fd, length) => pFtruncate(fd, length),
  close: (fd) => pClose(fd),
};

// Makes a directory entry durable (a created, linked or renamed file).
export async function fsyncDirectory(dir: string, journalFs: JournalFs = nodeJournalFs): Promise<void> {
  const fd = await journalFs.open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    await journalFs.fsync(fd);
  } finally {
    await journalFs.close(fd);
  }
}

// Writes all of `buffer`, continuing after short writes; a short write at a size limit
// is followed by a write that fails (EFBIG), which is what the caller sees.
export async function writeAll(journalFs: JournalFs, fd: number, buffer: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const written = await journalFs.write(fd, buffer, offset, buffer.length - offset);
    if (written <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
    offset += written;
  }
}
