#!/usr/bin/env node
// Committed shim: the built CLI decides the exit code; this file only loads it. A terminal
// that hung up while the tool ran must not turn that code into Node 20's abort at exit.
import { main, releaseHungUpTerminals } from '../dist/lib/cli.js';

process.on('exit', releaseHungUpTerminals);
process.exitCode = await main(process.argv.slice(2));
