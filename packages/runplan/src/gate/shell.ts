// A small POSIX shell reader for the gate: enough of the grammar to find every simple
// command in a Bash tool call and whether it runs as a background job. Quotes, escapes,
// `&&`, `||`, `;`, `|`, `&`, `coproc`, `( … )`, `{ … }`, `$( … )`, backquotes, process substitution,
// here-documents and here-strings, function definitions (`f() { … }`, `function f { … }`),
// redirections (`2>&1` and `&>` are not backgrounds) and comments are understood; nothing but
// brace expansion (`.git/{a,b}`, in the lexer) is expanded, and nothing is run. Text it cannot read (an open quote) throws.

import { HEREDOC_MARK, tokenize, type Token } from './tokens.js';

export { ShellSyntaxError } from './tokens.js';

/** One simple command as the shell would run it: its words with quotes removed. */
export interface SimpleCommand {
  /** The words, quotes and escapes removed; leading assignments and reserved words kept. */
  words: string[];
  /** Redirection targets (`> file`, `< file`, a here-string's word): files the command touches. */
  targets: string[];
  /** Here-document bodies and here-strings (`<<< '…'`) fed to the command (what `at` or `sh` would read). */
  heredocs: string[];
  /** How the command runs detached: `&` after it or after a group around it, or as (part of) a `coproc`. */
  background: '&' | 'coproc' | undefined;
  /** The simple command whose output this one reads, when it is the next stage of a pipe (`echo … | sh`). */
  stdin?: SimpleCommand;
  /** The shell function whose body holds this command, when the script defines one (`f() { … }`, `function f { … }`). */
  fn?: string;
}

// Every simple command in a script, in order, with commands of substitutions after their own.
export function parseScript(text: string): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  const tokens = tokenize(text);
  new Reader(tokens, out).list(undefined);
  return out;
}

/** Reserved words that may open a command without being its program. */
const RESERVED_OPENERS = new Set(['then', 'else', 'elif', 'do', '!']);
/** Reserved words that open a compound command, and those that close one: `if … fi &` backgrounds all of it. */
const COMPOUND_OPENERS = new Set(['if', 'while', 'until', 'for', 'select', 'case']);
const COMPOUND_CLOSERS = new Set(['fi', 'done', 'esac']);

// Walks the tokens as lists of and-or lists of pipelines; records commands into `out`.
class Reader {
  private at = 0;
  /** Where in `out` each open compound command (`if`, `while`, ...) began. */
  private readonly compounds: number[] = [];
  /** Where the compound command closed in the current and-or list began: a `&` after it backgrounds all of it. */
  private closedFrom: number | undefined;
  /** Per open list (innermost last): where a `coproc` in its current and-or list began (bash runs it asynchronously). */
  private readonly coprocs: Array<number | undefined> = [];
  constructor(
    private readonly tokens: Token[],
    private readonly out: SimpleCommand[],
  ) {}

  // A list up to its closer (`)` of a subshell, `}` of a brace group) or the end.
  list(closer: ')' | '}' | undefined): void {
    for (;;) {
      const first = this.out.length;
      this.closedFrom = undefined;
      this.coprocs.push(undefined);
      const ended = this.andOr(closer);
      const coproc = this.coprocs.pop();
      const next = this.tokens[this.at];
      if (next?.kind === 'op' && next.value === '&') {
        for (let k = Math.min(first, this.closedFrom ?? first); k < this.out.length; k++) this.out[k]!.background = '&';
      }
      if (coproc !== undefined) for (let k = coproc; k < this.out.length; k++) this.out[k]!.background ??= 'coproc';
      if (ended === 'close' || next === undefined) return;
      this.at++;
    }
  }

  // Pipelines joined by && / || / |; stops before `;`, `&`, newline, `)`, `}` or the end.
  private andOr(closer: ')' | '}' | undefined): 'close' | 'sep' {
    let current: SimpleCommand | undefined;
    // The stage before a `|`: what the next simple command reads.
    let feed: SimpleCommand | undefined;
    const start = (): SimpleCommand => {
      const command = this.push();
      if (feed !== undefined) command.stdin = feed;
      feed = undefined;
      return command;
    };
    for (;;) {
      const t = this.tokens[this.at];
      if (t === undefined) return 'sep';
      if (t.kind === 'op') {
        if (t.value === ')') {
          if (closer === ')') {
            this.at++;
            return 'close';
          }
          // A `case` pattern's `)`: a separator here.
          this.at++;
          current = undefined;
          continue;
        }
        // `NAME ( ) BODY`: a function definition; its body runs where NAME is called.
        const paren = this.tokens[this.at + 1];
        if (
          t.value === '(' &&
          current?.words.length === 1 &&
          !current.words[0]!.includes('=') &&
          paren?.kind === 'op' &&
          paren.value === ')'
        ) {
          this.out.splice(this.out.indexOf(current), 1);
          this.at += 2;
          this.functionBody(current.words[0]!);
          current = undefined;
          continue;
        }
        if (t.value === '(') {
          this.at++;
          this.list(')');
          current = undefined;
          continue;
        }
        if (t.value === '&' || t.value === ';' || t.value === '\n' || t.value === ';;') return 'sep';
        // && || | |& start a new simple command; after | and |& it reads this one's output.
        this.at++;
        feed = t.value === '|' || t.value === '|&' ? current : undefined;
        current = undefined;
        continue;
      }
      if (t.kind === 'redir') {
        this.at++;
        const target = this.tokens[this.at];
        if (target?.kind === 'word') {
          this.at++;
          current ??= start();
          if (target.value.startsWith(HEREDOC_MARK)) current.heredocs.push(target.value.slice(HEREDOC_MARK.length));
          else {
            if (t.value === '<<<') current.heredocs.push(target.value);
            current.targets.push(...(target.alts ?? [target.value]));
            this.substitutions(target.subs);
          }
        }
        continue;
      }
      this.at++;
      if (current === undefined && t.value === '}') {
        if (closer === '}') return 'close';
        continue;
      }
      if (current === undefined && t.value === '{') {
        this.list('}');
        continue;
      }
      if (current === undefined && COMPOUND_OPENERS.has(t.value)) {
        this.compounds.push(this.out.length);
        if (t.value === 'for' || t.value === 'select' || t.value === 'case') current = this.push();
        continue;
      }
      if (current === undefined && COMPOUND_CLOSERS.has(t.value)) {
        const from = this.compounds.pop();
        if (from !== undefined) this.closedFrom = Math.min(this.closedFrom ?? from, from);
        continue;
      }
      if (current === undefined && RESERVED_OPENERS.has(t.value)) continue;
      // `function NAME [( )] BODY`.
      const name = this.tokens[this.at];
      if (current === undefined && t.value === 'function' && name?.kind === 'word') {
        this.at++;
        if (this.tokens[this.at]?.value === '(' && this.tokens[this.at + 1]?.value === ')') this.at += 2;
        this.functionBody(name.value);
        continue;
      }
      // `coproc [NAME] COMMAND`: what follows, to the end of the and-or list, runs asynchronously.
      if (current === undefined && t.value === 'coproc') {
        const top = this.coprocs.length - 1;
        this.coprocs[top] ??= this.out.length;
        const name = this.tokens[this.at];
        const after = this.tokens[this.at + 1];
        if (name?.kind === 'word' && name.value !== '{' && (after?.value === '{' || (after?.kind === 'op' && after.value === '(')))
          this.at++;
        continue;
      }
      current ??= start();
      current.words.push(...(t.alts ?? [t.value]));
      this.substitutions(t.subs);
    }
  }

  // A function's body (a `{ ... }` group or a `( ... )` subshell, after any newlines): its commands are marked with its name.
  private functionBody(name: string): void {
    while (this.tokens[this.at]?.value === '\n') this.at++;
    const from = this.out.length;
    const body = this.tokens[this.at];
    if (body?.value !== '{' && body?.value !== '(') return;
    this.at++;
    this.list(body.value === '{' ? '}' : ')');
    for (let k = from; k < this.out.length; k++) this.out[k]!.fn ??= name;
  }

  private push(): SimpleCommand {
    const command: SimpleCommand = { words: [], targets: [], heredocs: [], background: undefined };
    this.out.push(command);
    return command;
  }

  private substitutions(subs: string[]): void {
    for (const sub of subs) this.out.push(...parseScript(sub));
  }
}
