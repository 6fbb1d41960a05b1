// What a command runs when it does not spell it out: a program named through a variable the
// script set (`RP=runplan; $RP run P`, `RP="runplan run"; $RP P`) or a lookup (`$(which runplan)`),
// the script a shell reads from a pipe (`echo 'runplan run P &' | cat | bash`), and the commands
// `find -exec` runs.
// Only what the script itself says is read: an unset variable or a file fed to a shell stays
// unknown, and nothing is run to learn it.
import { basename } from 'node:path';
import { decodeAnsiC } from './ansi-c.js';
import { parseScript, type SimpleCommand } from './shell.js';

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
/** A variable reference, `$NAME` or `${NAME}` (the name in group 1 or 2)… */
const REFERENCE = String.raw`\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})`;
/** …as a whole word, and anywhere in one. */
const VARIABLE_WORD = new RegExp(`^${REFERENCE}$`);
const VARIABLE_IN_WORD = new RegExp(REFERENCE, 'g');
/** Builtins whose `NAME=value` words set a variable (`export RP=runplan`). */
const DECLARERS = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);
/** Shells that read their script from stdin when no script is named. */
export const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh']);

/** The variables the script assigns, by name (the last value wins; one name may hold a lookup). */
export type Variables = Map<string, string>;

// Every `NAME=value` the script's commands set: standalone assignments and export/declare/….
export function assignments(commands: SimpleCommand[]): Variables {
  const vars: Variables = new Map();
  for (const command of commands) {
    const [first, ...rest] = command.words;
    const words = first !== undefined && DECLARERS.has(first) ? rest : command.words.every((w) => ASSIGNMENT.test(w)) ? command.words : [];
    for (const word of words) {
      const m = ASSIGNMENT.exec(word);
      if (m !== null) vars.set(m[1]!, m[2]!);
    }
  }
  return vars;
}

// A word as the script would have it once its variables and lookups are read: `$RP`, `${RP}`,
// `$D/runplan`, `$(which runplan)`, `` `command -v runplan` `` and `$(type -P runplan)` name their program.
export function resolveWord(word: string, vars: Variables, depth = 0): string {
  if (depth > 4) return word;
  const variable = VARIABLE_WORD.exec(word);
  if (variable !== null) {
    const value = vars.get(variable[1] ?? variable[2]!);
    return value === undefined ? word : resolveWord(value, vars, depth + 1);
  }
  // A variable inside a word (`$D/runplan`, `"${G}runplan"`) stands for its value there too.
  const inside = word.replace(VARIABLE_IN_WORD, (m, a, b) => vars.get(a ?? b) ?? m);
  if (inside !== word) return resolveWord(inside, vars, depth + 1);
  const sub = /^\$\((.*)\)$/s.exec(word) ?? /^`(.*)`$/s.exec(word);
  if (sub === null) return word;
  let commands: SimpleCommand[];
  try {
    commands = parseScript(sub[1]!);
  } catch {
    return word;
  }
  const looked = commands.length === 1 ? lookedUp(commands[0]!.words.map((w) => resolveWord(w, vars, depth + 1))) : undefined;
  return looked ?? word;
}

// A word as resolveWord reads it, then split at blanks when it is a variable alone: `RP="runplan run"; $RP P`
// runs `runplan` with `run P` (the lexer drops quotes, so a quoted "$RP" is split too; it may only deny more).
export function splitWord(word: string, vars: Variables): string[] {
  const value = resolveWord(word, vars);
  if (value === word || !VARIABLE_WORD.test(word)) return [value];
  return value.split(/[ \t\n]+/).filter((w) => w !== '');
}

// The program a lookup names: `which X`, `command -v X`, `type -P X` / `type -p X`.
function lookedUp(words: string[]): string | undefined {
  const [program, ...args] = words;
  if (program === undefined) return undefined;
  const operands = args.filter((a) => !a.startsWith('-'));
  if (program === 'which' && operands.length === 1) return operands[0];
  if ((program === 'command' || program === 'type') && args.some((a) => /^-[vVpP]+$/.test(a)) && operands.length === 1) return operands[0];
  return undefined;
}

// The script a shell command reads from its pipe, when the stage before it says what it is:
// `echo …`, `printf …` or a here-document / here-string (`cat <<EOF`). Undefined otherwise,
// and when the shell is given a script of its own (`bash -c '…'`, `sh file.sh`).
export function pipedScript(command: SimpleCommand, words: string[], vars: Variables): string | undefined {
  let producer = command.stdin;
  if (producer === undefined || words.slice(1).some((w) => !w.startsWith('-') || w === '-c')) return undefined;
  // Stages that pass their input through unchanged (`| cat |`, `| cat - |`, `| tee log |`) are looked through.
  while (producer.stdin !== undefined && passesThrough(producer.words.map((w) => resolveWord(w, vars)))) producer = producer.stdin;
  return outputOf(producer, vars);
}

// Whether a pipe stage writes what it reads, unchanged: `cat` with no operand but `-` (and `-u`), or `tee`.
function passesThrough(words: string[]): boolean {
  const program = words[0] !== undefined ? basename(words[0]) : undefined;
  if (program === 'cat') return words.slice(1).every((w) => w === '-' || w === '-u' || w === '--');
  return program === 'tee';
}

// The scripts a shell command reads from process substitutions: `bash <(echo '…')` and
// `sh < <(printf '…')`, when the substitution is one command whose output it says.
export function substitutedScripts(command: SimpleCommand, words: string[], vars: Variables): string[] {
  const scripts: string[] = [];
  for (const word of [...words.slice(1), ...command.targets]) {
    const sub = /^<\((.*)\)$/s.exec(word);
    if (sub === null) continue;
    let commands: SimpleCommand[];
    try {
      commands = parseScript(sub[1]!);
    } catch {
      continue;
    }
    const text = commands.length === 1 ? outputOf(commands[0]!, vars) : undefined;
    if (text !== undefined) scripts.push(text);
  }
  return scripts;
}

// What a command writes when the command itself says it: `echo …`, `printf …`, or a
// here-document / here-string it reads (`cat <<EOF`). Undefined for anything else.
function outputOf(producer: SimpleCommand, vars: Variables): string | undefined {
  const said = producer.words.map((w) => resolveWord(w, vars));
  const program = said[0] !== undefined ? basename(said[0]) : undefined;
  if (program === 'echo') {
    let i = 1;
    while (/^-[neE]+$/.test(said[i] ?? '')) i++;
    const text = said.slice(i).join(' ');
    return said.slice(1, i).some((f) => f.includes('e')) ? decodeAnsiC(text) : text;
  }
  if (program === 'printf') {
    const [format = '', ...args] = said[1] === '--' ? said.slice(2) : said.slice(1);
    let next = 0;
    return decodeAnsiC(format.replace(/%[sb]/g, () => args[next++] ?? ''));
  }
  if (producer.heredocs.length > 0) return producer.heredocs.join('\n');
  return undefined;
}

/** find's actions that run a command: their words run to a `;` or `+`. */
const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);

// The commands `find … -exec CMD … ;` would run (words[0] is find).
export function findActions(words: string[]): string[][] {
  const actions: string[][] = [];
  for (let i = 1; i < words.length; i++) {
    if (!FIND_ACTIONS.has(words[i]!)) continue;
    let end = i + 1;
    while (end < words.length && words[end] !== ';' && words[end] !== '+') end++;
    actions.push(words.slice(i + 1, end));
    i = end;
  }
  return actions;
}
