// A real small file system for the disk-full tests: a tmpfs of a few MiB (the tests run as
// root, as CI does). Mounting is required: a test that cannot mount fails, never passes.
import { execFileSync } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, openSync, readdirSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@runplan/test-fixtures';

export interface SmallFs {
  /** Where it is mounted. */
  path: string;
  /** Bytes still free (f_bavail × f_bsize). */
  free(): number;
  /** Writes a filler file until only `leave` bytes (rounded down to pages) are free; 0 fills it up. */
  fill(leave?: number): void;
  /** Removes the filler: the room comes back. */
  unfill(): void;
  /** Makes the file system bigger (remount): the disk itself changed. */
  grow(size: number): void;
  /** Unmounts (lazily, if something still holds it) and removes the mount point. */
  cleanup(): void;
}

const FILLER = '.filler';

// Mounts a tmpfs of `size` bytes at `dir` (a fresh temp dir when not given). When `dir`
// exists with content (a repository's .git/objects), that content is copied onto the new
// file system first, so only the room changes.
export function smallFs(size: number, dir?: string): SmallFs {
  const scratch = dir === undefined ? tempDir('runplan-smallfs-') : undefined;
  const path = dir ?? join(scratch!.path, 'fs');
  mkdirSync(path, { recursive: true });
  const keep = dir !== undefined && readdirSync(dir).length > 0 ? tempDir('runplan-smallfs-keep-') : undefined;
  if (keep) cpSync(path, keep.path, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', path], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (keep) {
    cpSync(keep.path, path, { recursive: true });
    keep.cleanup();
  }
  const free = () => {
    const s = statfsSync(path);
    return Number(s.bavail) * Number(s.bsize);
  };
  return {
    path,
    free,
    fill: (leave = 0) => {
      const fd = openSync(join(path, FILLER), 'a');
      const chunk = Buffer.alloc(4096);
      try {
        while (free() > leave) writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      } finally {
        closeSync(fd);
      }
    },
    unfill: () => rmSync(join(path, FILLER), { force: true }),
    grow: (bigger) => void execFileSync('mount', ['-o', `remount,size=${bigger}`, path], { stdio: ['ignore', 'ignore', 'pipe'] }),
    cleanup: () => {
      try {
        execFileSync('umount', [path], { stdio: 'ignore' });
      } catch {
        execFileSync('umount', ['-l', path], { stdio: 'ignore' });
      }
      scratch?.cleanup();
    },
  };
}
