// The build id of a CommonJS CLI bundle, shared by scripts/bundle.js and scripts/code-cache.js.
//
// A bundle's first line is `// build:<first 16 hex of the sha256 of the rest>`. esbuild may
// write a placeholder of the same length there (`// build:0000000000000000`, its banner), so
// stamping changes no line and a linked source map stays right; a bundle without the line
// gets it prepended. Stamping twice writes the same bytes.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

const line = /^\/\/ build:[0-9a-f]{16}\n/;

/** The line a bundle starts with before it is stamped (an esbuild banner). */
export const placeholder = `// build:${'0'.repeat(16)}\n`;

/** Stamps `file` with the id of its body; returns the id and the stamped text. */
export function stampBundle(file) {
  const body = readFileSync(file, 'utf8').replace(line, '');
  const id = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const text = `// build:${id}\n${body}`;
  writeAtomic(file, text);
  return { id, text };
}

/** Writes `data` to `file` through a temporary file and a rename. */
export function writeAtomic(file, data) {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, file);
}
