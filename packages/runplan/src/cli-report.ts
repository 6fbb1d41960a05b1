import { writeFile } from 'node:fs/promises';
import { isStreamTarget } from '@runplan/common';
import { resolve } from 'node:path';
import { listSlugs } from './host/state.js';
import { findReport, writeReport } from './observe/report.js';

// `runplan report [SLUG] [--run ID] [--out FILE] [--json]` at the terminal.

// Finds the run, then prints its data (--json), writes its HTML to stdout (--out -) or a file.
export async function reportCommand(
  stateRoot: string,
  slug: string | undefined,
  o: Record<string, unknown>,
  io: { say: (line: string) => void; print: (text: string) => void },
): Promise<number> {
  let name = slug;
  if (name === undefined) {
    const slugs = await listSlugs(stateRoot);
    if (slugs.length !== 1) {
      io.say(
        `runplan: ${slugs.length === 0 ? 'no_such_slug: no runs' : `usage: ${slugs.length} slugs (${slugs.join(', ')}); name one`} under ${stateRoot}`,
      );
      return slugs.length === 0 ? 1 : 2;
    }
    name = slugs[0]!;
  }
  const found = await findReport(stateRoot, name, typeof o.run === 'string' ? o.run : undefined);
  if (found.kind !== 'found') {
    io.say(`runplan: ${found.kind}: ${found.message}`);
    return 1;
  }
  if (o.json === true) {
    io.print(JSON.stringify(found.data) + '\n');
    return 0;
  }
  if (o.out === '-') {
    io.print(found.html());
    return 0;
  }
  const file = typeof o.out === 'string' ? resolve(o.out) : found.defaultOut;
  try {
    // A FIFO, a device (`--out /dev/null`, `/dev/stdout`) or a socket is written into as it
    // is: the report file's temp-and-rename would put a regular file in its place (as root,
    // /dev/null itself).
    if (isStreamTarget(file)) await writeFile(file, found.html());
    else await writeReport(file, found.html());
  } catch (e) {
    // The file system refused the report: an I/O failure (exit 5), not runplan's own error.
    const code = (e as NodeJS.ErrnoException).code;
    const reason = code === 'ENOSPC' || code === 'EDQUOT' ? 'disk_full' : 'io_error';
    io.say(`runplan: ${reason}: cannot write the report ${file}: ${e instanceof Error ? e.message : String(e)}`);
    return 5;
  }
  io.say(`runplan: report: ${file}`);
  return 0;
}
