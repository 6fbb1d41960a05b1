// Questions about a directory asked before anything is created in or run from it.
import type { Stats } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** The nearest existing ancestor of a path (the path itself included), and what is missing below it. */
export type Ancestry = { at: string; stats: Stats; missing: string | undefined } | { error: NodeJS.ErrnoException };

// Walks up from `path` to the first directory entry that exists: `missing` is the outermost
// one below it that does not (undefined when `path` exists). A component that is a file makes
// what is below it missing too (ENOTDIR), as `mkdir -p` would find; any other error is returned.
export async function nearestExisting(path: string): Promise<Ancestry> {
  let missing: string | undefined;
  for (let at = resolve(path); ; at = dirname(at)) {
    try {
      return { at, stats: await stat(at), missing };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(at) === at) return { error: e as NodeJS.ErrnoException };
      missing = at;
    }
  }
}

// Whether `mkdir -p DIR` could succeed, asked without creating anything (`run --dry-run`
// writes nothing): DIR, or else its nearest existing ancestor, must be a directory this
// process may write into. Undefined when it could; else the error the mkdir would meet.
export async function creatableError(dir: string): Promise<NodeJS.ErrnoException | undefined> {
  const found = await nearestExisting(dir);
  if ('error' in found) return found.error;
  if (!found.stats.isDirectory())
    return Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR', path: found.at });
  try {
    await access(found.at, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
}

// Why DIR cannot be a repository to work in, before git is asked (git says only "not a
// git repository" for a path that does not exist); undefined when it is a directory.
export async function notADirectory(dir: string): Promise<string | undefined> {
  try {
    return (await stat(dir)).isDirectory() ? undefined : `${dir} is not a directory`;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? `${dir} does not exist` : `${dir}: ${(e as Error).message}`;
  }
}
