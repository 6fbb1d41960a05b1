#!/usr/bin/env node
// Committed shim: the built CLI decides the exit code; this file only loads it.
import { main } from '../dist/lib/cli.js';

process.exitCode = await main(process.argv.slice(2));
