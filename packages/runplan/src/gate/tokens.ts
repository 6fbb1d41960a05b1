// The gate's shell lexer: a Bash tool command as words (quotes and escapes removed, the
// scripts of their command substitutions kept) and operators. Here-document bodies are read
// whole; a word's unquoted braces are expanded as bash would (`.git/{a,b}` is two words),
// nothing else is expanded or run. Text it cannot read (an open quote) throws.

import { decodeAnsiC } from './ansi-c.js';
import { expandBraces } from './braces.js';

/** Raised for text the reader cannot take apart; the gate decides what that means. */
export class ShellSyntaxError extends Error {
  override readonly name = 'ShellSyntaxError';
}

/** A word token; `alts` are the words its brace expansion makes (`.git/{a,b}`), when it makes more than one. */
export type Token =
  | { kind: 'word'; value: string; subs: string[]; alts?: string[] }
  | { kind: 'op'; value: string }
  | { kind: 'redir'; value: string };

const OPERATORS = [
  '&&',
  '||',
  ';;',
  '|&',
  '&>>',
  '&>',
  '>>',
  '>&',
  '>|',
  '<<<',
  '<<-',
  '<<',
  '<&',
  '<>',
  ';',
  '&',
  '|',
  '(',
  ')',
  '<',
  '>',
  '\n',
];
const REDIRS = new Set(['&>>', '&>', '>>', '>&', '>|', '<<<', '<<-', '<<', '<&', '<>', '<', '>']);

// Splits a script into words (with the command substitutions each holds) and operators.
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const heredocs: Array<{ delimiter: string; strip: boolean; into: Token & { kind: 'word' } }> = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '\\' && text[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    // A number right before a redirection is its file descriptor (`2>&1`), not a word.
    const fd = /^\d+(?=[<>])/.exec(text.slice(i));
    const at = fd !== null ? i + fd[0].length : i;
    const op = OPERATORS.find(
      (o) => text.startsWith(o, at) && !(o === '<' && text[at + 1] === '(') && !(o === '>' && text[at + 1] === '('),
    );
    if (op !== undefined && (fd !== null ? REDIRS.has(op) : true)) {
      i = at + op.length;
      if (REDIRS.has(op)) {
        tokens.push({ kind: 'redir', value: op });
        if (op === '<<' || op === '<<-') {
          const word = readWord(text, skipBlanks(text, i));
          const into = { kind: 'word' as const, value: word.value, subs: [] };
          tokens.push(into);
          heredocs.push({ delimiter: word.value, strip: op === '<<-', into });
          i = word.end;
        }
      } else tokens.push({ kind: 'op', value: op });
      if (op === '\n' && heredocs.length > 0) i = readHeredocs(text, i, heredocs.splice(0));
      continue;
    }
    const word = readWord(text, i);
    const braces = expandBraces(text.slice(i, word.end));
    const alts = braces.length > 1 ? braces.map((w) => readWord(w, 0).value).filter((w) => w !== '') : undefined;
    tokens.push({ kind: 'word', value: word.value, subs: word.subs, ...(alts !== undefined ? { alts } : {}) });
    i = word.end;
  }
  if (heredocs.length > 0) readHeredocs(text, text.length, heredocs);
  return tokens;
}

function skipBlanks(text: string, i: number): number {
  while (text[i] === ' ' || text[i] === '\t') i++;
  return i;
}

// Reads here-document bodies after a newline; each body replaces its delimiter token's value.
function readHeredocs(text: string, from: number, pending: Array<{ delimiter: string; strip: boolean; into: { value: string } }>): number {
  let i = from;
  for (const doc of pending) {
    const lines: string[] = [];
    for (;;) {
      if (i >= text.length) break;
      const end = text.indexOf('\n', i);
      const line = text.slice(i, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end + 1;
      if ((doc.strip ? line.replace(/^\t+/, '') : line) === doc.delimiter) break;
      lines.push(line);
    }
    doc.into.value = `${HEREDOC_MARK}${lines.join('\n')}`;
  }
  return i;
}

/** Marks a word token that holds a here-document body rather than a word. */
export const HEREDOC_MARK = '\0heredoc\0';

// One word from `start`: its unquoted value, where it ends, and the scripts of its substitutions.
function readWord(text: string, start: number): { value: string; end: number; subs: string[] } {
  let value = '';
  const subs: string[] = [];
  let i = start;
  while (i < text.length) {
    const c = text[i]!;
    if (' \t\n;&|()<>'.includes(c)) {
      // `<(…)` and `>(…)` inside a word are process substitutions.
      if ((c === '<' || c === '>') && text[i + 1] === '(') {
        const close = matchParen(text, i + 2);
        subs.push(text.slice(i + 2, close));
        value += text.slice(i, close + 1);
        i = close + 1;
        continue;
      }
      break;
    }
    if (c === '\\') {
      if (i + 1 < text.length && text[i + 1] !== '\n') value += text[i + 1];
      i += 2;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close === -1) throw new ShellSyntaxError(`unterminated ' at offset ${i}`);
      value += text.slice(i + 1, close);
      i = close + 1;
    } else if (c === '$' && text[i + 1] === "'") {
      const close = ansiEnd(text, i + 2);
      value += decodeAnsiC(text.slice(i + 2, close));
      i = close + 1;
    } else if (c === '"') {
      i = readDoubleQuoted(text, i + 1, subs, (s) => {
        value += s;
      });
    } else if (c === '$' && text[i + 1] === '(') {
      const close = matchParen(text, i + 2);
      if (text[i + 2] !== '(') subs.push(text.slice(i + 2, close));
      value += text.slice(i, close + 1);
      i = close + 1;
    } else if (c === '`') {
      const close = backquoteEnd(text, i + 1);
      subs.push(text.slice(i + 1, close));
      value += text.slice(i, close + 1);
      i = close + 1;
    } else {
      value += c;
      i++;
    }
  }
  return { value, end: i, subs };
}

// Reads a "…" body from `i` (after the quote); returns the index after the closing quote.
function readDoubleQuoted(text: string, from: number, subs: string[], add: (s: string) => void): number {
  let i = from;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') return i + 1;
    if (c === '\\' && i + 1 < text.length && '$`"\\\n'.includes(text[i + 1]!)) {
      if (text[i + 1] !== '\n') add(text[i + 1]!);
      i += 2;
    } else if (c === '$' && text[i + 1] === '(') {
      const close = matchParen(text, i + 2);
      if (text[i + 2] !== '(') subs.push(text.slice(i + 2, close));
      add(text.slice(i, close + 1));
      i = close + 1;
    } else if (c === '`') {
      const close = backquoteEnd(text, i + 1);
      subs.push(text.slice(i + 1, close));
      add(text.slice(i, close + 1));
      i = close + 1;
    } else {
      add(c);
      i++;
    }
  }
  throw new ShellSyntaxError(`unterminated " at offset ${from - 1}`);
}

// The index of the `)` that closes a `(` just before `from`, quotes and nesting respected.
function matchParen(text: string, from: number): number {
  let depth = 1;
  let i = from;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') i += 2;
    else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close === -1) break;
      i = close + 1;
    } else if (c === '"') i = readDoubleQuoted(text, i + 1, [], () => undefined);
    else if (c === '`') i = backquoteEnd(text, i + 1) + 1;
    else {
      if (c === '(') depth++;
      if (c === ')' && --depth === 0) return i;
      i++;
    }
  }
  throw new ShellSyntaxError(`unterminated ( before offset ${from}`);
}

function backquoteEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '`') return i;
  }
  throw new ShellSyntaxError(`unterminated \` at offset ${from - 1}`);
}

function ansiEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === "'") return i;
  }
  throw new ShellSyntaxError(`unterminated $' at offset ${from - 2}`);
}
