import { statSync } from 'node:fs';

/**
 * Whether an output path the operator named is a FIFO, a device or a socket (`--out
 * /dev/null`, `/dev/stdout`, a named pipe to a reader): written into as it is, never replaced
 * by a temporary file renamed over it (as root that would make /dev/null a regular file).
 * False for a regular file, a directory, or nothing there.
 */
export function isStreamTarget(path: string): boolean {
  try {
    const stat = statSync(path);
    return !stat.isFile() && !stat.isDirectory();
  } catch {
    return false;
  }
}
