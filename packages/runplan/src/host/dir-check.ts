// Questions about a directory asked before anything is created in or run from it.
import { access, constants, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

// Whether `mkdir -p DIR` could succeed, asked without creating anything (`run --dry-run`
// writes nothing): DIR, or else its nearest existing ancestor, must be a directory this
// process may write into. Undefined when it could; else the error the mkdir would meet.
export async function creatableError(dir: string): Promise<NodeJS.ErrnoException | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    let isDir: boolean;
    try {
      isDir = (await stat(at)).isDirectory();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && dirname(at) !== at) continue;
      return e as NodeJS.ErrnoException;
    }
    if (!isDir) return Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR', path: at });
    try {
      await access(at, constants.W_OK | constants.X_OK);
      return undefined;
    } catch (e) {
      return e as NodeJS.ErrnoException;
    }
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
