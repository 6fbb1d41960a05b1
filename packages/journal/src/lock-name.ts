import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

// The path a lock is keyed on: the real path, or, for a file not created yet, the real
// path of its directory plus its name. Undefined when the directory does not exist.
export function lockTarget(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(resolve(path))), basename(path));
    } catch {
      return undefined;
    }
  }
}

// The abstract socket name for a lock target: no file on disk, gone when its holder dies.
export function lockSocketName(target: string): string {
  return `\0runplan/${createHash('sha256').update(target).digest('hex')}`;
}
