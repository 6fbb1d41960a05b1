import { relative, resolve, sep } from 'node:path';
import { expandHome, spellings } from './live.js';
import type { SimpleCommand } from './shell.js';

// Reads that reach the state root from above it: a program that walks a directory tree,
// started on the root's parent (`grep -r x .git`, `find .`, `du -sh .git`, `cp -r .git /tmp`),
// and the Grep tool on such a directory. A path that names the root or a file in it is the
// other rule's (live.ts, touchesRoot).

/** How a walker treats hidden directories (`.git`) on its way down. */
type Hidden = 'enters' | 'skips';

interface Walker {
  /** Whether this call walks (some programs only with a flag: `grep -r`, `ls -R`). */
  walks(args: string[]): boolean;
  /** Whether it goes into hidden directories. */
  hidden(args: string[]): Hidden;
  /** The directories it starts from: its operands that are not options, else `.`. */
  starts(args: string[]): string[];
}

const flag = (args: string[], short: string, long: readonly string[] = []) =>
  args.some((a) => long.includes(a.split('=')[0]!) || (/^-[^-]/.test(a) && a.slice(1).includes(short)));

const operands = (args: string[]) => args.filter((a) => !a.startsWith('-'));

// grep's first operand is its pattern unless -e or -f gave one.
function grepStarts(args: string[]): string[] {
  const words = operands(args);
  const patternGiven = args.some((a) => a === '-e' || a === '-f' || a.startsWith('--regexp') || a.startsWith('--file'));
  const paths = patternGiven ? words : words.slice(1);
  return paths.length > 0 ? paths : ['.'];
}

const always = () => true;
const enters = (): Hidden => 'enters';
const startsOrHere = (args: string[]) => {
  const words = operands(args);
  return words.length > 0 ? words : ['.'];
};

const grep: Walker = {
  walks: (args) => flag(args, 'r', ['--recursive', '--dereference-recursive']) || flag(args, 'R') || args.includes('--directories=recurse'),
  hidden: enters,
  starts: grepStarts,
};
// ripgrep and the silver searcher walk by default and skip hidden directories unless told.
const searcher: Walker = {
  walks: always,
  hidden: (args) =>
    args.some((a) => ['--hidden', '-u', '-uu', '-uuu', '--unrestricted', '-a', '--all-types'].includes(a)) ? 'enters' : 'skips',
  starts: grepStarts,
};

const WALKERS: Record<string, Walker> = {
  grep,
  egrep: grep,
  fgrep: grep,
  rg: searcher,
  ag: searcher,
  // find's start points come before its expression (the first word from `-`, `(` or `!` on).
  find: {
    walks: always,
    hidden: enters,
    starts: (args) => {
      const end = args.findIndex((a) => a.startsWith('-') || a === '(' || a === '!');
      const words = (end === -1 ? args : args.slice(0, end)).filter((a) => !a.startsWith('-'));
      return words.length > 0 ? words : ['.'];
    },
  },
  du: { walks: always, hidden: enters, starts: startsOrHere },
  tree: { walks: always, hidden: (args) => (flag(args, 'a') ? 'enters' : 'skips'), starts: startsOrHere },
  ls: {
    walks: (args) => flag(args, 'R', ['--recursive']),
    hidden: (args) => (flag(args, 'a', ['--all']) || flag(args, 'A', ['--almost-all']) ? 'enters' : 'skips'),
    starts: startsOrHere,
  },
  cp: {
    walks: (args) => flag(args, 'r', ['--recursive', '--archive']) || flag(args, 'R') || flag(args, 'a'),
    hidden: enters,
    starts: operands,
  },
  rsync: { walks: (args) => flag(args, 'r', ['--recursive', '--archive']) || flag(args, 'a'), hidden: enters, starts: operands },
  scp: { walks: (args) => flag(args, 'r'), hidden: enters, starts: operands },
  zip: { walks: (args) => flag(args, 'r', ['--recurse-paths']), hidden: enters, starts: operands },
  tar: { walks: always, hidden: enters, starts: operands },
};

// The first start directory of a command from which it would walk into a live root, or undefined.
export function walksIntoRoot(c: SimpleCommand, cwds: string[], roots: string[]): string | undefined {
  const [program, ...args] = c.words;
  const walker = program !== undefined ? WALKERS[program.split('/').pop()!] : undefined;
  if (walker === undefined || !walker.walks(args)) return undefined;
  const hidden = walker.hidden(args);
  return walker.starts(args).find((start) => reachesFromAbove(start, cwds, roots, hidden));
}

// The Grep tool walks its `path` (its cwd without one) as ripgrep does: hidden directories skipped.
export function grepToolReaches(path: string | undefined, cwd: string, roots: string[]): string | undefined {
  const start = path ?? cwd;
  return reachesFromAbove(start, [cwd], roots, 'skips') ? start : undefined;
}

// Whether a walk started at `start` (from any of `cwds`) goes down into a root: the root lies
// strictly below it, and every directory on the way is one the walker enters.
function reachesFromAbove(start: string, cwds: string[], roots: string[], hidden: Hidden): boolean {
  for (const cwd of cwds) {
    const from = resolve(cwd, expandHome(start));
    for (const root of roots.flatMap(spellings)) {
      const rel = relative(from, root);
      if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`)) continue;
      if (hidden === 'enters' || !rel.split(sep).some((part) => part.startsWith('.'))) return true;
    }
  }
  return false;
}
