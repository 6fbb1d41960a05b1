#!/usr/bin/env node
// Runs one package's compiled uvu tests. Each dist/test/*.test.js file runs on its own
// (`node file` — every test file ends with `test.run()`), several files at once: the
// tests mostly wait on real processes, deadlines and graces, not on the CPU. Each file's
// output is printed whole when it finishes, and the totals are recorded in
// dist/.test-summary.json so the root `npm test` can print one closing line for all.
//
// Usage: node ../../scripts/uvu.js [--jobs N] [PATTERN]   (PATTERN filters file names)
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const jobsAt = args.indexOf('--jobs');
const jobs = jobsAt >= 0 ? Number(args.splice(jobsAt, 2)[1]) : Number(process.env.UVU_JOBS ?? Math.max(3, availableParallelism()));
const filter = args[0] ? new RegExp(args[0]) : undefined;
const dir = 'dist/test';
const files = readdirSync(dir)
  .filter((f) => /\.test\.js$/.test(f) && (!filter || filter.test(f)))
  .sort();

const totals = { total: 0, passed: 0, skipped: 0, failedFiles: [] };

// Runs one test file; resolves with its printed output and exit status.
function runFile(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dir, file)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => resolve({ file, text: Buffer.concat(chunks).toString('utf8'), code, signal }));
  });
}

const queue = [...files];
async function worker() {
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const r = await runFile(file);
    process.stdout.write(`\n── ${r.file}\n${r.text}`);
    const plain = r.text.replace(/\x1b\[[0-9;]*m/g, '');
    const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
    const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
    totals.total += total;
    totals.passed += passed;
    totals.skipped += Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0);
    if (r.code !== 0 || total === 0) {
      totals.failedFiles.push(r.file);
      if (total === passed) totals.total += 1; // a file that crashed or ran nothing counts as one failure
      process.stdout.write(
        `uvu: ${r.file} ${r.signal ? `killed by ${r.signal}` : `exited ${r.code}`}${total === 0 ? ' (no test ran)' : ''}\n`,
      );
    }
  }
}
await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker));

const ok = totals.failedFiles.length === 0 && files.length > 0;
mkdirSync('dist', { recursive: true });
writeFileSync('dist/.test-summary.json', JSON.stringify({ ...totals, ok }) + '\n');
process.stdout.write(
  `\n${files.length} files: ${totals.passed} passed, ${totals.total - totals.passed - totals.skipped} failed` +
    (totals.failedFiles.length ? ` (${totals.failedFiles.join(', ')})` : '') +
    '\n',
);
if (files.length === 0) process.stderr.write('uvu: no test files in dist/test\n');
process.exitCode = ok ? 0 : 1;
