import { renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Room a cache file leaves on its file system besides twice its size: a cache never takes the journal's. */
const SPARE_BYTES = 64 * 1024 * 1024;

// Writes a cache file (the fold snapshot, the plan cache) whole or not at all: a temp file
// renamed over it, not synced (a torn one fails its checksum and is not read). False when
// none was written, also when the file system has less room than twice its size plus
// 64 MiB, so that a cache never fills the disk a journal append needs.
export function writeCacheFile(path: string, bytes: Buffer): boolean {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    const fs = statfsSync(dirname(path));
    if (fs.bavail * fs.bsize < 2 * bytes.length + SPARE_BYTES) return false;
    writeFileSync(temp, bytes, { mode: 0o600 });
    renameSync(temp, path);
    return true;
  } catch {
    rmSync(temp, { force: true });
    return false;
  }
}
