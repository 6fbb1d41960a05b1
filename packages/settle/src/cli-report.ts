import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { err, ok, type Result } from '@runplan/common';
import { say } from './cli-output.js';
import { reportText, type SettleReport, writeReport } from './report.js';

// Where `--report FILE` goes: through settle's own stdout or stderr when FILE names one,
// else to the file, written atomically.

// Why --report FILE could not be written whatever the command does, checked before it runs; undefined when it could.
export function reportUnwritable(path: string): string | undefined {
  if (isDirectory(path)) return 'it is a directory';
  const directory = dirname(resolve(path));
  return isDirectory(directory) ? undefined : `directory ${directory} does not exist`;
}

// Writes the report to `path`: ok with the stream it went through when `path` names settle's
// own stdout or stderr (undefined for a file), or why it could not be written.
export async function deliverReport(path: string, report: SettleReport): Promise<Result<NodeJS.WriteStream | undefined, string>> {
  const ownStream = settleStreamNamed(path);
  if (ownStream) {
    // settle's own stdout or stderr (maybe a socket, which cannot be opened by name): the
    // report goes after what the command wrote there, through the same stream.
    if (ownStream.destroyed || ownStream.writableEnded) return err('the stream is closed');
    say(ownStream, reportText(report));
    return ok(ownStream);
  }
  try {
    await writeReport(path, report);
    return ok(undefined);
  } catch (error) {
    return err((error as Error).message);
  }
}

// process.stdout for `/dev/stdout`, `/dev/fd/1` or `/proc/self/fd/1` (stderr for 2); undefined for any other path.
function settleStreamNamed(path: string): NodeJS.WriteStream | undefined {
  const fd = /^\/dev\/std(out|err)$/.exec(path)?.[1] ?? /^\/(?:dev|proc\/self)\/fd\/([12])$/.exec(path)?.[1];
  if (fd === 'out' || fd === '1') return process.stdout;
  if (fd === 'err' || fd === '2') return process.stderr;
  return undefined;
}

function isDirectory(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory();
  } catch {
    return false;
  }
}
