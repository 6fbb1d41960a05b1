// Brace expansion as bash does it on an unquoted word, before anything else: `a{b,c}d` is
// `abd acd`, `{1..3}` is `1 2 3`, `{a..c}` is `a b c`. It works on the word as written, so a
// quoted or escaped brace (`'{a,b}'`, `\{a,b}`) and `${…}`, `$(…)`, backquotes are left alone.

/** More words than this from one word are not expanded further (the gate reads, it does not enumerate). */
const LIMIT = 256;

// The words a word as written expands to: itself alone when it holds no brace expansion.
export function expandBraces(raw: string): string[] {
  if (!raw.includes('{') || !(raw.includes(',') || raw.includes('..'))) return [raw];
  const done: string[] = [];
  const pending = [raw];
  while (pending.length > 0 && done.length + pending.length <= LIMIT) {
    const word = pending.shift()!;
    const alternatives = expandFirst(word);
    if (alternatives === undefined) done.push(word);
    else pending.unshift(...alternatives);
  }
  return [...done, ...pending];
}

// The first brace expression of a word, expanded once (undefined when there is none).
function expandFirst(word: string): string[] | undefined {
  const active = activeMask(word);
  for (let open = 0; open < word.length; open++) {
    if (!active[open] || word[open] !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    for (let i = open; i < word.length; i++) {
      if (!active[i]) continue;
      if (word[i] === '{') depth++;
      else if (word[i] === ',' && depth === 1) commas.push(i);
      else if (word[i] === '}' && --depth === 0) {
        const before = word.slice(0, open);
        const after = word.slice(i + 1);
        const body = word.slice(open + 1, i);
        const parts =
          commas.length > 0 ? [open, ...commas].map((at, k) => word.slice(at + 1, k < commas.length ? commas[k] : i)) : sequence(body);
        if (parts !== undefined) return parts.map((p) => before + p + after);
        break;
      }
    }
  }
  return undefined;
}

// `{1..5}`, `{5..1..2}`, `{a..e}`: the words of a sequence expression, or undefined for any other body.
function sequence(body: string): string[] | undefined {
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (m === null) return undefined;
  const numeric = /\d/.test(m[1]!);
  if (numeric !== /\d/.test(m[2]!)) return undefined;
  const from = numeric ? Number(m[1]) : m[1]!.charCodeAt(0);
  const to = numeric ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.max(1, Math.abs(Number(m[3] ?? 1)));
  const out: string[] = [];
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) {
    out.push(numeric ? String(v) : String.fromCharCode(v));
    if (out.length > LIMIT) break;
  }
  return out;
}

// Which characters of a word are unquoted shell text (true) rather than inside quotes, after a
// backslash, or inside `${…}`, `$(…)`, `<(…)`, `>(…)` or backquotes (false).
function activeMask(word: string): boolean[] {
  const active = new Array<boolean>(word.length).fill(false);
  let i = 0;
  while (i < word.length) {
    const c = word[i]!;
    if (c === '\\') i += 2;
    else if (c === "'") i = closing(word, i + 1, "'", false);
    else if (c === '$' && word[i + 1] === "'") i = closing(word, i + 2, "'", true);
    else if (c === '"') i = closing(word, i + 1, '"', true);
    else if (c === '`') i = closing(word, i + 1, '`', true);
    else if ('$<>'.includes(c) && (word[i + 1] === '{' || word[i + 1] === '(')) i = nested(word, i + 1);
    else {
      active[i] = true;
      i++;
    }
  }
  return active;
}

// The index after the quote that closes one opened before `from`.
function closing(word: string, from: number, quote: string, escapes: boolean): number {
  for (let i = from; i < word.length; i++) {
    if (escapes && word[i] === '\\') i++;
    else if (word[i] === quote) return i + 1;
  }
  return word.length;
}

// The index after the bracket that closes the one at `at` (`{` or `(`), quotes respected.
function nested(word: string, at: number): number {
  const open = word[at]!;
  const close = open === '{' ? '}' : ')';
  let depth = 0;
  for (let i = at; i < word.length; i++) {
    const c = word[i]!;
    if (c === '\\') i++;
    else if (c === "'") i = closing(word, i + 1, "'", false) - 1;
    else if (c === '"') i = closing(word, i + 1, '"', true) - 1;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return i + 1;
  }
  return word.length;
}
