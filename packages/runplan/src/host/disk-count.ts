import { spawn } from 'node:child_process';
import { diskUsage } from './state.js';

/**
 * Output find(1) may print before it is taken as not what we asked for: one short line per
 * entry ("f 1234"), so 64 MiB is millions of entries — beyond that the in-process walk counts.
 */
const MAX_FIND_OUTPUT = 64 * 2 ** 20;

/**
 * Bytes used by a directory tree, as `diskUsage` counts them (every entry but a directory, by
 * its own size: a symlink as itself, never followed), counted by GNU find(1) in a child process
 * when it can: the walk then runs in C on another core while the caller reads journals, instead
 * of ~6 000 readdir/stat calls through Node on the main thread (`runplan status` of a slug with
 * 100 runs: ~60–90 ms of main-thread time, ~30 ms of find's). Whenever find is missing, is not
 * GNU's (no -printf), cannot read something, sees an entry vanish or prints anything unexpected,
 * the answer comes from the in-process walk instead — never part of find's count. (The walk
 * counts a directory it cannot read as empty, as it always did.)
 */
export function countDiskUsage(path: string): Promise<number> {
  // find takes an argument starting with '-' for an option: only absolute paths go to it.
  if (!path.startsWith('/')) return diskUsage(path);
  return new Promise((resolve) => {
    let settled = false;
    const fallBack = () => {
      if (settled) return;
      settled = true;
      resolve(diskUsage(path));
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('find', ['-H', path, '-printf', '%y %s\\n'], {
        env: { ...process.env, LC_ALL: 'C', POSIXLY_CORRECT: undefined },
        cwd: '/', // find may go back to its start directory; ours may be gone or unreadable
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch {
      fallBack();
      return;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let complained = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_FIND_OUTPUT) {
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
    });
    // Anything on stderr (an unreadable directory, an entry gone mid-walk) means find's sum is not the walk's.
    child.stderr!.on('data', () => {
      complained = true;
    });
    child.on('error', fallBack);
    child.on('close', (code) => {
      if (settled) return;
      const total =
        code === 0 && !complained && bytes <= MAX_FIND_OUTPUT ? sumFindLines(Buffer.concat(chunks).toString('latin1')) : undefined;
      if (total === undefined) fallBack();
      else {
        settled = true;
        resolve(total);
      }
    });
  });
}

// The sum of find's "TYPE SIZE" lines over every type but 'd'; undefined when a line is not that shape.
export function sumFindLines(text: string): number | undefined {
  let total = 0;
  let start = 0;
  // The tree's root comes first and must be a directory (-H: a symlink to one is followed, as
  // readdir follows it); a missing or non-directory root is the walk's to count.
  if (!text.startsWith('d ')) return undefined;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    if (end === -1) return undefined; // find ends every line: a cut line is not its output
    const type = text.charCodeAt(start);
    if (text.charCodeAt(start + 1) !== 32 || end - start < 3) return undefined;
    const size = text.slice(start + 2, end);
    if (!/^\d+$/.test(size)) return undefined;
    if (type !== 100 /* d */) total += Number(size);
    start = end + 1;
  }
  return total;
}
