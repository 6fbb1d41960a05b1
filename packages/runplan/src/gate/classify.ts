import { basename } from 'node:path';
import { assignments, findActions, pipedScript, SHELLS, splitWord, substitutedScripts, type Variables } from './indirect.js';
import { parseScript, type SimpleCommand } from './shell.js';

/** A `runplan …` the script would start, however it is spelled and wrapped. */
export interface Invocation {
  /** The subcommand (`run`, `status`, …); undefined for a bare `runplan`. */
  sub: string | undefined;
  /** The words after `runplan`. */
  args: string[];
  /** Why it would run detached from the caller, when it would: `&`, `nohup`, `setsid`, … */
  background: string | undefined;
}

/** What the gate needs to know about one Bash tool call. */
export interface Classified {
  invocations: Invocation[];
  /** Every simple command that is not a runplan invocation (paths it names may be state reads). */
  others: SimpleCommand[];
  /** A command of the script that detaches jobs or queues them (`disown`, `at`, `batch`). */
  detacher: string | undefined;
}

/** Programs that run the command they are given; the ones that detach it say how. */
const WRAPPERS = new Map<string, string | undefined>([
  ['nohup', 'nohup'],
  ['setsid', 'setsid'],
  ['systemd-run', 'systemd-run'],
  ['screen', 'screen'],
  ['tmux', 'tmux'],
  ['daemonize', 'daemonize'],
  ['start-stop-daemon', 'start-stop-daemon'],
  ['timeout', undefined],
  ['settle', undefined],
  ['nice', undefined],
  ['ionice', undefined],
  ['chrt', undefined],
  ['taskset', undefined],
  ['env', undefined],
  ['stdbuf', undefined],
  ['sudo', undefined],
  ['doas', undefined],
  ['runuser', undefined],
  ['su', undefined],
  ['exec', undefined],
  ['command', undefined],
  ['builtin', undefined],
  ['time', undefined],
  ['xargs', undefined],
  ['watch', undefined],
  ['script', undefined],
  ['flock', undefined],
  ['unbuffer', undefined],
  ['sh', undefined],
  ['bash', undefined],
  ['dash', undefined],
  ['zsh', undefined],
  ['ksh', undefined],
  ['eval', undefined],
  ['parallel', undefined],
]);

/** How a command's own shell syntax detaches it, in the denial's words. */
const BACKGROUND_REASONS: Record<'&' | 'coproc' | 'none', string | undefined> = {
  '&': '`&` (a background job)',
  coproc: '`coproc` (an asynchronous coprocess)',
  none: undefined,
};

/** Commands that detach or queue work so nothing waits for it. */
const DETACHERS = new Set(['disown', 'at', 'batch']);

/** runplan flags that take a value (so the value is not mistaken for the subcommand). */
const VALUE_FLAGS = new Set(['--repo', '--state-dir', '--run', '--retry', '--jobs', '--wait', '--grace']);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

// Takes a Bash tool command apart: the runplan invocations it holds and everything else.
export function classify(script: string): Classified {
  const found: Classified = { invocations: [], others: [], detacher: undefined };
  const commands = parseScript(script);
  const functions = new Map<string, SimpleCommand[]>();
  for (const command of commands) if (command.fn !== undefined) functions.set(command.fn, [...(functions.get(command.fn) ?? []), command]);
  collect(commands, undefined, found, { vars: assignments(commands), functions, calls: 0 });
  return found;
}

/** What the script defines that its commands may use: variables, and the bodies of its shell functions by name. */
interface Scope {
  vars: Variables;
  functions: Map<string, SimpleCommand[]>;
  /** How deep in function calls the reading is (a function that calls itself is read a few times, not forever). */
  calls: number;
}

function collect(commands: SimpleCommand[], inherited: string | undefined, found: Classified, scope: Scope): void {
  for (const command of commands) {
    const background = inherited ?? BACKGROUND_REASONS[command.background ?? 'none'];
    const words = command.words
      .filter((_, i, all) => !all.slice(0, i + 1).every((w) => ASSIGNMENT.test(w)))
      .flatMap((w) => splitWord(w, scope.vars));
    const program = words[0] !== undefined ? basename(words[0]) : undefined;
    if (program !== undefined && DETACHERS.has(program)) found.detacher ??= program;
    // A call of a function the script defines runs its body, detached as the call is (`f() { runplan run P; }; f &`).
    const body = program !== undefined ? scope.functions.get(program) : undefined;
    if (body !== undefined && scope.calls < 4) collect(body, background, found, { ...scope, calls: scope.calls + 1 });
    // A here-document is a script when a shell or `at` reads it; so is what a pipe feeds a shell.
    const detachedAs = background ?? (program === 'at' || program === 'batch' ? program : undefined);
    for (const body of command.heredocs)
      if (program !== undefined && (WRAPPERS.has(program) || DETACHERS.has(program))) collect(parseScript(body), detachedAs, found, scope);
    // The shell, also behind a wrapper (`… | sudo bash`, `… | env bash`), and what it is fed.
    const shellAt = program !== undefined && WRAPPERS.has(program) ? words.findIndex((w) => SHELLS.has(basename(w))) : -1;
    const shell =
      program !== undefined && (SHELLS.has(program) || DETACHERS.has(program)) ? words : shellAt > 0 ? words.slice(shellAt) : undefined;
    if (shell !== undefined) {
      const piped = pipedScript(command, shell, scope.vars);
      for (const script of [...(piped !== undefined ? [piped] : []), ...substitutedScripts(command, shell, scope.vars)])
        collect(parseScript(script), detachedAs, found, scope);
    }
    // `source <(…)` / `. <(…)`: the current shell runs what the substitution writes.
    if (program === 'source' || program === '.')
      for (const script of substitutedScripts(command, words, scope.vars)) collect(parseScript(script), detachedAs, found, scope);
    // A read is checked as written and as resolved (`cat $J` after `J=.git/runplan/…`).
    const resolved = words.filter((w) => !command.words.includes(w));
    if (!unwrap(words, background, found, scope)) found.others.push({ ...command, words: [...command.words, ...resolved] });
  }
}

// Finds the runplan invocation a command starts, through its wrappers; false when there is none.
function unwrap(words: string[], background: string | undefined, found: Classified, scope: Scope): boolean {
  const start = runplanArgs(words, 0);
  if (start !== undefined) {
    found.invocations.push(invocation(words.slice(start), background));
    return true;
  }
  const program = words[0] !== undefined ? basename(words[0]) : undefined;
  if (program === 'find') return findActions(words).filter((action) => unwrap(action, background, found, scope)).length > 0;
  if (program === undefined || !WRAPPERS.has(program)) return false;
  const detaches = WRAPPERS.get(program) ?? sudoBackground(program, words) ?? background;
  const before = found.invocations.length;
  for (let i = 1; i < words.length; i++) {
    const at = runplanArgs(words, i);
    if (at !== undefined) {
      found.invocations.push(invocation(words.slice(at), detaches));
      return true;
    }
    const next = basename(words[i]!);
    if ((WRAPPERS.has(next) || next === 'find') && !words[i]!.startsWith('-')) return unwrap(words.slice(i), detaches, found, scope);
    // A word with blanks or shell syntax in it is a script the wrapper hands to a shell
    // (`sh -c '…'`, `tmux new -d '…'`, `su -c '…'`, `eval "…"`).
    if (/[\s;&|()`$]/.test(words[i]!)) collect(parseScript(words[i]!), detaches, found, scope);
  }
  return found.invocations.length > before;
}

/** sudo options whose value is the next word (`-u nobody`). */
const SUDO_VALUE_FLAGS = new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '-T', '-R']);

// `sudo -b` / `--background` (alone or in a cluster of short flags before the command) runs it detached.
function sudoBackground(program: string, words: string[]): string | undefined {
  if (program !== 'sudo') return undefined;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith('-') || w === '--') return undefined;
    if (w === '--background' || /^-[A-Za-z]*b[A-Za-z]*$/.test(w)) return 'sudo -b';
    if (SUDO_VALUE_FLAGS.has(w)) i++;
  }
  return undefined;
}

/** The subcommands of npm, pnpm and yarn that run a package's bin. */
const PACKAGE_RUNNERS = new Set(['exec', 'x', 'dlx']);

// Where runplan's own arguments start when words[i] begins a runplan invocation.
function runplanArgs(words: string[], i: number): number | undefined {
  const word = words[i];
  if (word === undefined) return undefined;
  const name = basename(word);
  if (name === 'runplan' || name === 'runplan.js') return i + 1;
  // `npm exec` / `npm x`, `pnpm exec` / `pnpm dlx`, `yarn exec` / `yarn dlx` run a package's bin as npx does.
  const runsPackage = (name === 'npm' || name === 'pnpm' || name === 'yarn') && PACKAGE_RUNNERS.has(words[i + 1] ?? '');
  if (name === 'npx' || name === 'pnpx' || name === 'bunx' || runsPackage) {
    let j = i + (runsPackage ? 2 : 1);
    while (words[j]?.startsWith('-')) j += words[j] === '-p' || words[j] === '--package' ? 2 : 1;
    const pkg = words[j];
    return pkg === 'runplan' || pkg === '@runplan/runplan' || pkg?.startsWith('runplan@') ? j + 1 : undefined;
  }
  if (name === 'node' || name === 'nodejs') {
    let j = i + 1;
    while (words[j]?.startsWith('-')) j += /^(-r|--require|--import|--loader|--conditions|-C)$/.test(words[j]!) ? 2 : 1;
    const file = words[j];
    return file !== undefined && (basename(file) === 'runplan.js' || basename(file) === 'runplan') ? j + 1 : undefined;
  }
  return undefined;
}

function invocation(args: string[], background: string | undefined): Invocation {
  let sub: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (VALUE_FLAGS.has(a)) i++;
    else if (!a.startsWith('-')) {
      sub = a;
      break;
    }
  }
  return { sub, args, background };
}

// Whether an invocation starts a coordinator: `run` (not `--dry-run`) or `demo`.
export function launches(inv: Invocation): boolean {
  return (inv.sub === 'run' && !inv.args.includes('--dry-run')) || inv.sub === 'demo';
}

/** Subcommands that read a run's state: denied while its coordinator is live. */
export const FORENSIC = new Set(['status', 'log', 'report']);

// The values of a flag across invocations (`--state-dir X` and `--state-dir=X`).
export function flagValues(invocations: Invocation[], flag: string): string[] {
  const values: string[] = [];
  for (const inv of invocations) {
    inv.args.forEach((a, i) => {
      if (a === flag && inv.args[i + 1] !== undefined) values.push(inv.args[i + 1]!);
      else if (a.startsWith(`${flag}=`)) values.push(a.slice(flag.length + 1));
    });
  }
  return values;
}
