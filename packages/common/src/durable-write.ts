import { closeSync, fchmodSync, fsync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Options of writeFileDurable. */
export interface DurableWriteOptions {
  /** The new file's permission bits (default 0600: what the tools write is their operator's). */
  mode?: number;
  /** fsync the data before the rename (default true): off only where a crash may lose the file whole. */
  fsync?: boolean;
}

/** Temporary files made by this process so far: part of each one's name, so two writes never share one. */
let made = 0;

/**
 * Writes a whole file atomically: the data goes to a new temporary file beside `path`
 * (`.NAME.PID.N.tmp`, created exclusively with `mode`), is fsynced, and is renamed over
 * `path`. A reader sees the old file or the new one, never part of either; a failed write
 * removes its temporary file; after a crash (or a kill) at most that file is left, and `path`
 * is untouched. The caller fsyncs the directory when the new entry itself must survive a crash.
 * Only the fsync waits on the thread pool (fsyncFd); the other calls are synchronous.
 *
 * What it does not do that write-file-atomic does, on purpose: it replaces a symlink at `path`
 * instead of writing through it, keeps no file's owner, and hooks no signal handlers to remove
 * its temporary file on exit — hooking and unhooking ~15 signals per write was most of
 * write-file-atomic's ~1 ms a call, paid twice per task for the mark files (workdir README).
 */
export async function writeFileDurable(path: string, data: string | Uint8Array, options: DurableWriteOptions = {}): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${++made}.tmp`);
  const mode = options.mode ?? 0o600;
  const fd = openSync(tmp, 'wx', mode);
  let renamed = false;
  try {
    try {
      // The mode exactly, as write-file-atomic sets it: open()'s is narrowed by the umask.
      fchmodSync(fd, mode);
      writeWhole(fd, typeof data === 'string' ? Buffer.from(data) : data);
      if (options.fsync ?? true) await fsyncFd(fd);
    } catch (error) {
      // The write's own error is the one to report, not a close() failing after it.
      try {
        closeSync(fd);
      } catch {}
      throw error;
    }
    closeSync(fd);
    renameSync(tmp, path);
    renamed = true;
  } finally {
    if (!renamed) {
      try {
        unlinkSync(tmp);
      } catch {}
    }
  }
}

// Every byte of data at fd's offset; writeSync may write less than asked (at a size limit the
// next call fails, EFBIG), and one that writes nothing is an I/O error, never a loop.
function writeWhole(fd: number, data: Uint8Array): void {
  for (let at = 0; at < data.length; ) {
    const written = writeSync(fd, data, at, data.length - at);
    if (written <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
    at += written;
  }
}

/**
 * fsync(2) of an open descriptor on the thread pool: the one call here that waits on the disk
 * (milliseconds), so it never stalls the event loop. The calls around it (open, write to the
 * page cache, rename, close: microseconds each) are synchronous — each on the thread pool
 * cost a wake-up of it and of the loop, ~35 round trips for the two marked directories of a task.
 */
export function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/** fsync a directory by path, so a created or renamed entry in it survives a crash. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
}
