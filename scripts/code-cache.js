#!/usr/bin/env node
// settle's build step after esbuild: `node scripts/code-cache.js BUNDLE.cjs ARGS...`.
//
// Marks the CommonJS bundle with a build id (`// build:<first 16 hex of its sha256>` as its
// first line), runs it once in this process exactly as bin/settle.js loads it (the CLI's
// `main(ARGS)`, e.g. `-- /bin/true`), and then writes V8's code cache of it — which by then
// holds the functions that run compiled — to BUNDLE with `.cache` for `.cjs`, behind a header
// naming the same build id. The bin hands V8 the cache only when the ids match (V8's own
// check compares only the source's length), so a rebuilt bundle never runs a stale cache.
// A cache V8 rejects (another Node, other flags) is ignored by V8 itself: the bundle is then
// compiled as usual, and so is a truncated one (V8 checks the payload's length). V8 does not
// checksum the payload unless `--verify-snapshot-checksum` is set, and setting it at run time
// makes V8 reject Node's own code caches of its built-in modules (slower than no cache):
// the cache is part of the program, as the bundle is — written atomically here, shipped in
// the integrity-checked tarball. What it buys: packages/settle/README.md, "Start-up".
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Script } from 'node:vm';

const [given, ...args] = process.argv.slice(2);
if (!given?.endsWith('.cjs')) {
  process.stderr.write('usage: node scripts/code-cache.js BUNDLE.cjs ARGS...\n');
  process.exit(2);
}
const bundle = resolve(given);
const banner = /^\/\/ build:[0-9a-f]{16}\n/;
const body = readFileSync(bundle, 'utf8').replace(banner, '');
const id = createHash('sha256').update(body).digest('hex').slice(0, 16);
const source = `// build:${id}\n${body}`;
writeAtomic(bundle, source);

const script = new Script(Module.wrap(source), { filename: bundle });
const module = { exports: {} };
script.runInThisContext().call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
await module.exports.main(args);
process.exitCode = 0;
writeAtomic(bundle.replace(/\.cjs$/, '.cache'), Buffer.concat([Buffer.from(`settle-code-cache ${id}\n`), script.createCachedData()]));

function writeAtomic(file, data) {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, file);
}
