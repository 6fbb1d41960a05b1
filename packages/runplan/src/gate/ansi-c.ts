// Bash's ANSI-C quoting, `$'…'`: the body decoded as bash decodes it, so a word spelled
// `$'\x72unplan'` or `$'run\160lan'` reads as `runplan` (nothing else is expanded).

const SIMPLE: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** Escapes that take digits: the pattern of their digits and the base they are read in. */
const NUMERIC: Record<string, { digits: RegExp; base: number }> = {
  x: { digits: /^[0-9A-Fa-f]{1,2}/, base: 16 },
  u: { digits: /^[0-9A-Fa-f]{1,4}/, base: 16 },
  U: { digits: /^[0-9A-Fa-f]{1,8}/, base: 16 },
};

// The text a `$'…'` body (between the quotes) stands for.
export function decodeAnsiC(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const e = body[++i]!;
    const octal = /^[0-7]{1,3}/.exec(body.slice(i));
    if (octal !== null) {
      out += String.fromCharCode(Number.parseInt(octal[0], 8) & 0xff);
      i += octal[0].length - 1;
    } else if (e in SIMPLE) out += SIMPLE[e];
    else if (e in NUMERIC) {
      const n = NUMERIC[e]!.digits.exec(body.slice(i + 1));
      if (n === null) out += `\\${e}`;
      else {
        out += String.fromCodePoint(Math.min(Number.parseInt(n[0], NUMERIC[e]!.base), 0x10ffff));
        i += n[0].length;
      }
    } else if (e === 'c' && i + 1 < body.length) out += String.fromCharCode(body.charCodeAt(++i) & 0x1f);
    else out += `\\${e}`;
  }
  return out;
}
