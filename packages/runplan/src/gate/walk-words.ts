// The words of a command the gate's walk rule reads (recursive.ts): options, their values,
// operands, and the program behind assignments and wrappers.

export const flag = (args: string[], short: string, long: readonly string[] = []) =>
  args.some((a) => long.includes(a.split('=')[0]!) || (/^-[^-]/.test(a) && a.slice(1).includes(short)));

// The words that are not options nor the value of one (`-m 1`, `--include '*.ts'`):
// `valued` names the options that take the next word.
export function operands(args: string[], valued: ReadonlySet<string> = NONE): string[] {
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
export const NONE: ReadonlySet<string> = new Set();
// Options of grep and ripgrep that take the next word, then each one's own.
const SEARCH_VALUED = [
  '-e',
  '-f',
  '-m',
  '-A',
  '-B',
  '-C',
  '--regexp',
  '--file',
  '--max-count',
  '--context',
  '--after-context',
  '--before-context',
];
export const GREP_VALUED = new Set([...SEARCH_VALUED, '-d', '-D', '--include', '--exclude', '--exclude-dir', '--label']);
export const RG_VALUED = new Set([
  ...SEARCH_VALUED,
  ...['-g', '-t', '-T', '-j', '-M', '--glob', '--type', '--type-not', '--threads', '--max-columns', '--ignore-file', '--max-depth'],
]);
export const DU_VALUED = new Set(['-d', '-B', '-t', '--max-depth', '--block-size', '--threshold', '--exclude', '-X', '--exclude-from']);
export const TREE_VALUED = new Set(['-L', '-P', '-I', '-o', '--filelimit', '--timefmt', '-H', '-T', '--charset']);
export const LS_VALUED = new Set([
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

// tar's operands that it reads: not the archive (the word after `f`, bundled or not) nor `-C DIR`.
export function tarStarts(args: string[]): string[] {
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
export function program(words: readonly string[]): { name: string | undefined; args: string[] } {
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
