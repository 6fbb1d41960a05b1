#!/usr/bin/env node
// Runs one package's compiled uvu tests (dist/test/*.test.js) and records the totals in
// dist/.test-summary.json so the root `npm test` can print one closing line for all.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
// uvu does not export its bin; it sits beside dist/ in the package.
const uvuBin = join(dirname(require.resolve('uvu')), '..', 'bin.js');
const args = [uvuBin, 'dist/test', '\\.test\\.js$', ...process.argv.slice(2)];
const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
let text = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  text += chunk.toString('utf8');
  if (text.length > 1 << 20) text = text.slice(-4096);
});
child.on('exit', (code, signal) => {
  const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
  const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const skipped = Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const ok = code === 0;
  mkdirSync('dist', { recursive: true });
  writeFileSync('dist/.test-summary.json', JSON.stringify({ total, passed, skipped, ok }) + '\n');
  if (ok && total === 0) {
    process.stderr.write('uvu: no test ran\n');
    process.exitCode = 1;
    return;
  }
  process.exitCode = code ?? 128 + 1;
  if (signal) process.stderr.write(`uvu: killed by ${signal}\n`);
});
