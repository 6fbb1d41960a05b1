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

// The words that are not options nor the value of one (`-m 1`, `--include '*.ts'`):
// `valued` names the options that take the next word.
function operands(args: string[], valued: ReadonlySet<string> = NONE): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') out.push(a);
    else if (valued.has(a)) i++;
  }
  return out;
}
const NONE: ReadonlySet<string> = new Set();
const GREP_VALUED = new Set([
  '-e',
  '-f',
  '-m',
  '-A',
  '-B',
  '-C',
  '-d',
  '-D',
  '--regexp',
  '--file',
  '--max-count',
  '--include',
  '--exclude',
  '--exclude-dir',
  '--context',
  '--after-context',
  '--before-context',
  '--label',
]);
const RG_VALUED = new Set([
  '-e',
  '-f',
  '-m',
  '-A',
  '-B',
  '-C',
  '-g',
  '-t',
  '-T',
  '-j',
  '-M',
  '--glob',
  '--type',
  '--type-not',
  '--regexp',
  '--file',
  '--max-count',
  '--threads',
  '--max-columns',
  '--ignore-file',
  '--max-depth',
  '--context',
  '--after-context',
  '--before-context',
]);
const DU_VALUED = new Set(['-d', '-B', '-t', '--max-depth', '--block-size', '--threshold', '--exclude', '-X', '--exclude-from']);
const TREE_VALUED = new Set(['-L', '-P', '-I', '-o', '--filelimit', '--timefmt', '-H', '-T', '--charset']);
const LS_VALUED = new Set([
  '-I',
  '-w',
  '-T',
  '--ignore',
  '--hide',
  '--width',
  '--tabsize',
  '--format',
  '--sort',
  '--time',
  '--color',
  '--block-size',
  '--quoting-style',
  '--indicator-style',
]);

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

// tar's operands that it reads: not the archive (the word after `f`, bundled or not) nor `-C DIR`.
function tarStarts(args: string[]): string[] {
  const out: string[] = [];
  const first = args[0] ?? '';
  const oldStyle = first !== '' && !first.startsWith('-');
  let archivePending = oldStyle && first.includes('f');
  for (let i = oldStyle ? 1 : 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-C' || a === '--directory' || a === '-f' || a === '--file' || /^-[^-]*f$/.test(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    if (archivePending) {
      archivePending = false;
      continue;
    }
    out.push(a);
  }
  return out;
}

// Words that run the next word as the command: a leading assignment, and wrappers
// (`timeout 5 grep -r ...`, `sudo find .`, `env X=1 du .`).
function program(words: readonly string[]): { name: string | undefined; args: string[] } {
  let i = 0;
  for (;;) {
    const w = words[i];
    if (w === undefined) return { name: undefined, args: [] };
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++;
    else if (['sudo', 'time', 'nohup', 'command', 'exec', 'env', 'nice', 'ionice', 'stdbuf'].includes(w)) {
      i++;
      for (let next = words[i]; next !== undefined; next = words[i]) {
        if (next.startsWith('-')) i += w !== 'env' && ['-n', '-u', '-g', '-c', '-o', '-i', '-e'].includes(next) ? 2 : 1;
        else if (w === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(next)) i++;
        else break;
      }
    } else if (w === 'timeout') {
      i++;
      while (words[i]?.startsWith('-')) i += ['-k', '-s', '--kill-after', '--signal'].includes(words[i]!) ? 2 : 1;
      i++; // its duration
    } else return { name: w.split('/').pop(), args: words.slice(i + 1) };
  }
}

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
