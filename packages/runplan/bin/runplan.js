#!/usr/bin/env node
// Committed shim: the built CLI decides the exit code; this file only loads it. Loading can
// fail (dist not built, a broken install): as a hook (`runplan gate …`) that must deny, never
// exit 1 — Claude Code reads 1 as "allow". So must a CLI that throws, or that never returns
// an exit code (its promise unsettled when nothing is left to run): 2 for `gate`, else 1.
//
// CommonJS on purpose (bin/package.json), as settle's bin: it runs dist/lib/cli.cjs, the CLI
// as one CommonJS module wrapped in its function, with the V8 code cache the build made of it
// (scripts/code-cache.js): no ES module loader and no compile at start (README, "Start-up").
// Without that file (a build that stopped after the ES modules) it imports dist/lib/cli.js.
'use strict';
// First statement, as in settle's bin: a SIGUSR1 listener keeps Node from opening its inspector
// (a debugger port on 127.0.0.1 that any local process, an agent of the run included, could
// attach to and run code in the coordinator) when SIGUSR1 comes. The signal is otherwise ignored.
process.on('SIGUSR1', () => {});
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
// The form of the one-file CLI (scripts/stamp.js): its build id, then the module wrapped in its function.
const wrappedForm = /^(?:\/\/ build:[0-9a-f]{16}\n)?\(function \(exports, require, module, __filename, __dirname\) \{/;

const failed = process.argv[2] === 'gate' ? 2 : 1;
const bundle = join(__dirname, '..', 'dist', 'lib', 'cli.cjs');
let cli;
try {
  cli = existsSync(bundle) ? Promise.resolve(loadBundle(bundle)) : import('../dist/lib/cli.js');
} catch (e) {
  cli = Promise.reject(e);
}

// The exit code the CLI returned (or the bin chose); undefined until then.
let returned;
process.on('exit', (code) => {
  if (returned === undefined) {
    process.stderr.write('runplan: internal error: the command ended without an exit code\n');
    process.exitCode = failed;
  } else if (failed === 2 && code !== returned) process.exitCode = 2; // an error after the gate's answer
});

// Node 20 aborts as it exits (an assertion in its ResetStdio: exit 134 and a native stack trace
// instead of our exit code) when it restores the mode of a terminal that has hung up, a tmux
// pane killed or an ssh session dropped while we ran (nodejs/node#51519; later majors fixed it).
// A standard fd on a terminal device (major 4, 5 or 136-143: ttys, consoles, ptys) that no
// longer answers as a terminal is closed first: Node then leaves it alone. The same guard is
// in settle's bin.
process.on('exit', releaseHungUpTerminals);
function releaseHungUpTerminals() {
  const { closeSync, fstatSync } = require('node:fs');
  for (const fd of [0, 1, 2]) {
    let st;
    try {
      st = fstatSync(fd);
    } catch {
      continue;
    }
    const major = Math.floor(st.rdev / 256) % 4096;
    if (!st.isCharacterDevice() || !(major === 4 || major === 5 || (major >= 136 && major <= 143))) continue;
    if (require('node:tty').isatty(fd)) continue;
    try {
      closeSync(fd);
    } catch {}
  }
}
cli
  .then((loaded) => {
    if (typeof loaded?.main !== 'function') throw new Error('it has no main()');
    return loaded;
  })
  .then(
    (loaded) =>
      loaded
        .main(process.argv.slice(2))
        .then(answer, (e) => fail(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)),
    (e) => {
      fail(`cannot load the built CLI (${e instanceof Error ? e.message : String(e)})\n  hint: npm run build`);
      process.exit(failed);
    },
  );

function answer(code) {
  returned = code;
  process.exitCode = code;
}

function fail(message) {
  process.stderr.write(`runplan: ${message}\n`);
  answer(failed);
}

// Runs the bundle as require() would, with the V8 code cache the build made of this very
// bundle when there is one (the same loader as settle's bin). The file is the module already
// wrapped in its function (scripts/stamp.js), so V8 compiles it as it is; it is not a module
// require() could load. The cache is read first: at 0.8 MB it then gets a mapping of its own,
// unmapped once it is collected, instead of a hole in malloc's heap that every spawn()'s fork
// would copy.
function loadBundle(file) {
  const cache = readCache(file.replace(/\.cjs$/, '.cache'));
  const source = readFileSync(file, 'utf8');
  if (!wrappedForm.test(source)) throw new Error(`${file} is not a wrapped bundle (scripts/stamp.js)`);
  const { Script } = require('node:vm');
  const script = new Script(source, { filename: file, cachedData: codeCacheOf(source, cache) });
  const wrapped = script.runInThisContext();
  if (typeof wrapped !== 'function') throw new Error(`${file} is not a wrapped bundle (scripts/stamp.js)`);
  const module = { exports: {} };
  wrapped.call(module.exports, module.exports, require, module, file, dirname(file));
  return module.exports;
}

function readCache(cacheFile) {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

// The cache's V8 data when its header names the bundle's build id (its first line) and the
// data's crc32, else undefined. V8 checks only the source's length; the id is what ties a
// cache to one build. V8 does not checksum the data, and a cache with bytes flipped inside
// can make it abort: the crc32 turns that into a compile without the cache, so `gate` still
// decides (a hook that crashes would let the tool call through).
function codeCacheOf(source, data) {
  const id = /^\/\/ build:([0-9a-f]{16})\n/.exec(source.slice(0, 32))?.[1];
  if (id === undefined || data === undefined) return undefined;
  const header = /^cli-code-cache ([0-9a-f]{16}) ([0-9a-f]{8})\n/.exec(data.toString('latin1', 0, 64));
  if (header === null || header[1] !== id) return undefined;
  const payload = data.subarray(header[0].length);
  if (payload.length === 0 || require('node:zlib').crc32(payload) !== Number.parseInt(header[2], 16)) return undefined;
  return payload;
}
