import { open, rename, unlink } from 'node:fs/promises';
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
 *
 * What it does not do that write-file-atomic does, on purpose: it replaces a symlink at `path`
 * instead of writing through it, keeps no file's owner, and hooks no signal handlers to remove
 * its temporary file on exit — hooking and unhooking ~15 signals per write was most of
 * write-file-atomic's ~1 ms a call, paid twice per task for the mark files (workdir README).
 */
export async function writeFileDurable(path: string, data: string | Uint8Array, options: DurableWriteOptions = {}): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${++made}.tmp`);
  const mode = options.mode ?? 0o600;
  const handle = await open(tmp, 'wx', mode);
  let renamed = false;
  try {
    try {
      // The mode exactly, as write-file-atomic sets it: open()'s is narrowed by the umask.
      await handle.chmod(mode);
      await handle.writeFile(data);
      if (options.fsync ?? true) await handle.sync();
    } catch (error) {
      // The write's own error is the one to report, not a close() failing after it.
      await handle.close().catch(() => {});
      throw error;
    }
    await handle.close();
    await rename(tmp, path);
    renamed = true;
  } finally {
    if (!renamed) await unlink(tmp).catch(() => {});
  }
}
