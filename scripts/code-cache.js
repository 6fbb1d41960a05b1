#!/usr/bin/env node
// A CLI bundle's build step after esbuild:
//   node scripts/code-cache.js BUNDLE.cjs [--quiet] [--checksum] ARGS...
//   node scripts/code-cache.js BUNDLE.cjs [--quiet] [--checksum] --warmup MODULE
//
// Wraps the CommonJS bundle in its module function and stamps it with its build id
// (scripts/stamp.js: `// build:<first 16 hex of its sha256>` as its first line), runs it once
// in this process exactly as the package's bin loads it — the CLI's `main(ARGS)` (settle's
// `-- /bin/true`), or, with `--warmup`, MODULE's default export called with `main` (runplan's:
// a two-task plan in a scratch repository) — and then writes V8's code cache of it, which by then holds the functions that ran compiled,
// to BUNDLE with `.cache` for `.cjs`, behind a header naming the bundle and the same build id
// (`<name>-code-cache <id>`, name the bundle's file name without `.cjs`). The run must end 0.
// `--quiet` keeps the run's output and prints it only when the step fails. `--checksum` adds
// the payload's crc32 to the header (`<name>-code-cache <id> <crc32 as 8 hex>`), for a bin that
// checks it before V8 sees the payload (runplan's, whose `gate` must deny rather than crash).
//
// The bin hands V8 the cache only when the ids match (V8's own check compares only the
// source's length), so a rebuilt bundle never runs a stale cache. A cache V8 rejects (another
// Node, other flags) is ignored by V8 itself: the bundle is then compiled as usual, and so is a
// truncated one (V8 checks the payload's length). V8 does not checksum the payload unless
// `--verify-snapshot-checksum` is set, and setting it at run time makes V8 reject Node's own
// code caches of its built-in modules (slower than no cache): the cache is part of the
// program, as the bundle is — written atomically here, shipped in the integrity-checked
// tarball. What it buys: packages/settle/README.md and packages/runplan/README.md, "Start-up".
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { basename, dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';
import { stampBundle, writeAtomic } from './stamp.js';

const [given, ...rest] = process.argv.slice(2);
if (!given?.endsWith('.cjs')) usage();
if (rest[0] === '--quiet') {
  // The same step in a child whose output is kept.
  const r = spawnSync(process.execPath, [process.argv[1], given, ...rest.slice(1)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) process.stderr.write(`${r.stdout}${r.stderr}code-cache: ${given}: exited ${r.status ?? r.signal}\n`);
  process.exit(r.status ?? 1);
}
const checksum = rest[0] === '--checksum';
if (checksum) rest.shift();
let warmup;
if (rest[0] === '--warmup') {
  if (rest.length !== 2) usage();
  warmup = (await import(pathToFileURL(resolve(rest[1])).href)).default;
}

const bundle = resolve(given);
const { id, text: source } = stampBundle(bundle);
// The bins compile the bundle through vm.Script, which has no loader for `import()`: one left
// in it (a dependency's, not turned into a require by esbuild) would throw only with the cache.
const dynamic = /\bimport\s*\(/.exec(source);
if (dynamic !== null) refuse(`calls import() (at offset ${dynamic.index}), which its bin's vm.Script cannot load`);
// One character past U+007F anywhere, a comment's dash included, and V8 holds the whole text
// as two bytes a character (2.4 MB for runplan's CLI instead of 1.2) in every process.
const wide = /[^\x00-\x7f]/.exec(source);
if (wide !== null) {
  const at = source.slice(0, wide.index).split('\n');
  const char = `U+${wide[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  refuse(
    `holds a character past ASCII (${char} at line ${at.length}, column ${at.at(-1).length + 1}); write it in ASCII or as a \\u escape in the source`,
  );
}
const script = new Script(source, { filename: bundle });
const module = { exports: {} };
script.runInThisContext().call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
const { main } = module.exports;
const code = warmup === undefined ? await main(rest) : await warmup(main);
if (code !== 0) {
  process.stderr.write(`code-cache: ${given}: the run before the cache exited ${code}\n`);
  process.exit(1);
}
process.exitCode = 0;
const payload = script.createCachedData();
const crc = checksum ? ` ${crc32(payload).toString(16).padStart(8, '0')}` : '';
const header = `${basename(bundle, '.cjs')}-code-cache ${id}${crc}\n`;
writeAtomic(bundle.replace(/\.cjs$/, '.cache'), Buffer.concat([Buffer.from(header), payload]));

function refuse(why) {
  process.stderr.write(`code-cache: ${given} ${why}\n`);
  process.exit(1);
}

function usage() {
  process.stderr.write('usage: node scripts/code-cache.js BUNDLE.cjs [--quiet] [--checksum] (ARGS... | --warmup MODULE)\n');
  process.exit(2);
}
