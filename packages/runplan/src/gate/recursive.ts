import { relative, resolve, sep } from 'node:path';
import { expandHome, spellings } from './live.js';
import { DU_VALUED, flag, GREP_VALUED, LS_VALUED, NONE, operands, program, RG_VALUED, tarStarts, TREE_VALUED } from './walk-words.js';
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

// grep's (rg's) first operand is its pattern unless -e or -f gave one.
function searchStarts(valued: ReadonlySet<string>): (args: string[]) => string[] {
  return (args) => {
    const words = operands(args, valued);
    const patternGiven = args.some((a) => a === '-e' || a === '-f' || a.startsWith('--regexp') || a.startsWith('--file'));
    const paths = patternGiven ? words : words.slice(1);
    return paths.length > 0 ? paths : ['.'];
  };
}
const grepStarts = searchStarts(GREP_VALUED);

const always = () => true;
const enters = (): Hidden => 'enters';
const startsOrHere =
  (valued: ReadonlySet<string> = NONE) =>
  (args: string[]) => {
    const words = operands(args, valued);
    return words.length > 0 ? words : ['.'];
  };
// A copy walks its sources, never its destination (the last operand of two or more).
const sources = (args: string[]) => {
  const words = operands(args, new Set(['-t', '--target-directory', '-e', '--rsh', '--exclude', '--include', '-P', '-i', '-o', '-F']));
  return words.length >= 2 ? words.slice(0, -1) : words;
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
  starts: searchStarts(RG_VALUED),
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
  du: { walks: always, hidden: enters, starts: startsOrHere(DU_VALUED) },
  tree: { walks: always, hidden: (args) => (flag(args, 'a') ? 'enters' : 'skips'), starts: startsOrHere(TREE_VALUED) },
  ls: {
    walks: (args) => flag(args, 'R', ['--recursive']),
    hidden: (args) => (flag(args, 'a', ['--all']) || flag(args, 'A', ['--almost-all']) ? 'enters' : 'skips'),
    starts: startsOrHere(LS_VALUED),
  },
  cp: {
    walks: (args) => flag(args, 'r', ['--recursive', '--archive']) || flag(args, 'R') || flag(args, 'a'),
    hidden: enters,
    starts: sources,
  },
  rsync: { walks: (args) => flag(args, 'r', ['--recursive', '--archive']) || flag(args, 'a'), hidden: enters, starts: sources },
  scp: { walks: (args) => flag(args, 'r'), hidden: enters, starts: sources },
  // zip ARCHIVE FILES...: the archive is written, the rest walked.
  zip: { walks: (args) => flag(args, 'r', ['--recurse-paths']), hidden: enters, starts: (args) => operands(args).slice(1) },
  // tar walks only when it creates (`c` in its first word, `-c`, `--create`); never `-C DIR` nor the archive (`f`).
  tar: {
    walks: (args) => /^[^-]*c/.test(args[0] ?? '') || flag(args, 'c', ['--create']),
    hidden: enters,
    starts: tarStarts,
  },
};

// The first start directory of a command from which it would walk into a live root, or undefined.
export function walksIntoRoot(c: SimpleCommand, cwds: string[], roots: string[]): string | undefined {
  const { name, args } = program(c.words);
  const walker = name !== undefined && Object.hasOwn(WALKERS, name) ? WALKERS[name] : undefined;
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
