#!/usr/bin/env node
// `npm test`: build every package, run every package's tests (one package at a time, so
// the process-timing tests of one package do not compete with another's), then print one
// closing line: "N passed, N failed".
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const dirs = pkg.workspaces.map((w) => join(root, w));
for (const dir of dirs) rmSync(join(dir, 'dist/.test-summary.json'), { force: true });

// runplan's Slurm executor is tested on a real single-node cluster: when this host has
// Slurm's daemons installed and none answers, start one for the tests and stop it after.
const slurm = join(root, 'scripts/slurm-local.sh');
const canStart = process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v slurmctld munged'], { stdio: 'ignore' }).status === 0;
const startedSlurm = canStart && spawnSync(slurm, ['status'], { stdio: 'ignore' }).status !== 0;
if (startedSlurm) {
  process.stdout.write('npm test: starting a single-node Slurm for the Slurm tests (scripts/slurm-local.sh up)\n');
  spawnSync(slurm, ['up'], { stdio: 'inherit' });
}

const turbo = spawnSync('npx', ['turbo', 'run', 'test', '--concurrency=1', '--continue', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});

if (startedSlurm) spawnSync(slurm, ['down'], { stdio: 'inherit' });

let passed = 0;
let failed = 0;
for (const dir of dirs) {
  const file = join(dir, 'dist/.test-summary.json');
  if (!existsSync(file)) continue;
  const s = JSON.parse(readFileSync(file, 'utf8'));
  passed += s.passed;
  failed += s.total - s.passed - s.skipped;
}
const ok = turbo.status === 0;
if (!ok && failed === 0) failed = 1;
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exitCode = ok ? 0 : 1;
