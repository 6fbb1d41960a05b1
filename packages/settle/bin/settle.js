#!/usr/bin/env node
// Committed shim: the built CLI decides the exit code; this file only loads it.
//
// CommonJS on purpose (bin/package.json): an ES module entry starts Node's ESM loader,
// ~15 ms of CPU and ~0.4 MB of heap before settle runs a line (see the README's Start-up).
// The build emits dist/settle.cjs, the CLI and its dependencies as one CommonJS module wrapped
// in its function (esbuild, then scripts/stamp.js); without it (only `tsc` ran) the shim falls
// back to the ES modules in dist/src.
'use strict';
// First statement: a SIGUSR1 listener keeps Node from starting its inspector (a debugger
// port opened by a signal) on SIGUSR1. The CLI relays SIGUSR1 to the command once it runs;
// one that arrives before that (while Node starts and this file loads) is dropped.
process.on('SIGUSR1', () => {});
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
// The form of the one-file CLI (scripts/stamp.js): its build id, then the module wrapped in its function.
const wrappedForm = /^(?:\/\/ build:[0-9a-f]{16}\n)?\(function \(exports, require, module, __filename, __dirname\) \{/;

const bundle = join(__dirname, '..', 'dist', 'settle.cjs');
let cli;
try {
  cli = existsSync(bundle) ? Promise.resolve(loadBundle(bundle)) : import('../dist/src/cli.js');
} catch (e) {
  cli = Promise.reject(e);
}

// Node 20 aborts as it exits (an assertion in its ResetStdio: exit 134 and a native stack trace
// instead of our exit code) when it restores the mode of a terminal that has hung up, a tmux
// pane killed or an ssh session dropped while we ran (nodejs/node#51519; later majors fixed it).
// A standard fd on a terminal device (major 4, 5 or 136-143: ttys, consoles, ptys) that no
// longer answers as a terminal is closed first: Node then leaves it alone. The same guard is
// in runplan's bin.
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

// The exit code the CLI returned; undefined until then. A CLI that cannot load, rejects, or
// never returns one (nothing left to run and no answer) is settle's own failure, 125, never
// the 0 an empty exit code would be.
let returned;
cli
  .then(({ main }) => main(process.argv.slice(2)))
  .then(
    (code) => {
      returned = code;
      process.exitCode = code;
    },
    (e) => {
      returned = 125;
      process.stderr.write(`settle: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 125;
    },
  );
// 'beforeExit' comes once the event loop is empty: the child reaped, its tree settled, every
// write handed to the OS. Exiting there skips Node's teardown of the environment, which
// costs a few ms of CPU at every run.
process.once('beforeExit', () => {
  if (returned === undefined) {
    process.stderr.write('settle: internal error: the command ended without an exit code\n');
    process.exitCode = 125;
  }
  process.exit();
});

// Runs the bundle as require() would, but with the V8 code cache the build made of this very
// bundle (scripts/code-cache.js): its functions arrive compiled, ~5 ms of CPU less per start.
// The file is the module already wrapped in its function (scripts/stamp.js), so V8 compiles
// it as it is: wrapping it here would make a second copy of the whole text, and with it the
// young generation's first collection before the command runs. It is not a module require()
// could load.
function loadBundle(file) {
  const source = readFileSync(file, 'utf8');
  if (!wrappedForm.test(source)) throw new Error(`${file} is not a wrapped bundle (scripts/stamp.js)`);
  const { Script } = require('node:vm');
  const script = new Script(source, { filename: file, cachedData: codeCacheOf(source, file.replace(/\.cjs$/, '.cache')) });
  const wrapped = script.runInThisContext();
  if (typeof wrapped !== 'function') throw new Error(`${file} is not a wrapped bundle (scripts/stamp.js)`);
  const module = { exports: {} };
  wrapped.call(module.exports, module.exports, require, module, file, dirname(file));
  return module.exports;
}

// The cache's V8 data when its header names the bundle's build id (its first line), else
// undefined. V8 checks only the source's length; the id is what ties a cache to one build.
function codeCacheOf(source, cacheFile) {
  const id = /^\/\/ build:([0-9a-f]{16})\n/.exec(source.slice(0, 32))?.[1];
  if (id === undefined) return undefined;
  let data;
  try {
    data = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  const header = `settle-code-cache ${id}\n`;
  if (data.length <= header.length || data.toString('latin1', 0, header.length) !== header) return undefined;
  return data.subarray(header.length);
}
