// The form of a one-file CLI bundle (settle's, runplan's), shared by scripts/bundle.js and
// scripts/code-cache.js: what esbuild wrote, wrapped and stamped with its build id.
//
// - Its first line is `// build:<first 16 hex of the sha256 of the rest>`. esbuild may write a
//   placeholder of the same length there (`// build:0000000000000000`, its banner), so
//   stamping changes no line and a linked source map stays right; a bundle without the line
//   gets it prepended.
// - The rest is the CommonJS module wrapped in its function, `(function (exports, require,
//   module, __filename, __dirname) {` … `})`, as Node's loader would wrap it. So the file is one
//   expression whose value is that function, and the bins compile it as it is (vm.Script): the
//   wrapping Node's `require` does would otherwise make V8 a second, concatenated copy of the
//   whole text at every start (1.2 MB for runplan's; for settle's it was what pushed the young
//   generation into a collection before the command ran). The head goes at the start of the
//   line after the build id and `})` on a line of its own before the source map comment, so no
//   mapped line moves. It also means the file is not a module `require` can load.
//
// Stamping twice writes the same bytes.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

const line = /^\/\/ build:[0-9a-f]{16}\n/;
const sourceMapComment = /\n\/\/# sourceMappingURL=[^\n]*\n?$/;

/** The line a bundle starts with before it is stamped (an esbuild banner). */
export const placeholder = `// build:${'0'.repeat(16)}\n`;

/** What the module's text is wrapped in: the head starts the line after the build id. */
export const wrapperHead = '(function (exports, require, module, __filename, __dirname) {';
const wrapperTail = '})\n';

/** Stamps `file` with the id of its wrapped body (wrapping it first); returns the id and the stamped text. */
export function stampBundle(file) {
  let body = readFileSync(file, 'utf8').replace(line, '');
  if (!body.startsWith(wrapperHead)) {
    const map = sourceMapComment.exec(body);
    const code = map === null ? body : body.slice(0, map.index + 1);
    body = `${wrapperHead}${code}${code.endsWith('\n') ? '' : '\n'}${wrapperTail}${map === null ? '' : map[0].slice(1)}`;
  }
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
