#!/usr/bin/env node
// Committed shim: the built CLI decides the exit code; this file only loads it.
//
// CommonJS on purpose (bin/package.json): an ES module entry starts Node's ESM loader,
// ~15 ms of CPU and ~0.4 MB of heap before settle runs a line (see the README's Start-up).
// The build emits dist/settle.cjs, the CLI and its dependencies as one CommonJS file
// (esbuild); without it (only `tsc` ran) the shim falls back to the ES modules in dist/src.
'use strict';
// First statement: a SIGUSR1 listener keeps Node from starting its inspector (a debugger
// port opened by a signal) on SIGUSR1. The CLI relays SIGUSR1 to the command once it runs;
// one that arrives before that (while Node starts and this file loads) is dropped.
process.on('SIGUSR1', () => {});
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const bundle = join(__dirname, '..', 'dist', 'settle.cjs');
const cli = existsSync(bundle) ? Promise.resolve(require(bundle)) : import('../dist/src/cli.js');

cli
  .then(({ main }) => main(process.argv.slice(2)))
  .then((code) => {
    process.exitCode = code;
  });
// 'beforeExit' comes once the event loop is empty: the child reaped, its tree settled, every
// write handed to the OS. Exiting there skips Node's teardown of the environment, which
// costs a few ms of CPU at every run.
process.once('beforeExit', () => process.exit());
