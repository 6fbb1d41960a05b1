#!/usr/bin/env node
// `npm test`: build every package, run every package's tests (one package at a time, so
// the process-timing tests of one package do not compete with another's), then print one
// closing line: "N passed, N failed".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
// Every test run on this host that may use the cluster says so with a file named for its pid
// (another clone's `npm test` or `.ci/run` beside this one): the run that started the cluster
// stops it only when no other live run is using it. It stopped it under another run's Slurm
// tests, which then failed with "Unable to contact slurm controller". The run that starts it
// leaves a `started` mark there, so whichever run ends last stops it (when the starter ended
// first, the cluster had stayed up after every test run was gone).
const users = join(tmpdir(), 'runplan-slurm-users');
const startedMark = join(users, 'started');
if (canStart) {
  mkdirSync(users, { recursive: true });
  writeFileSync(join(users, String(process.pid)), '');
}
if (startedSlurm) {
  writeFileSync(startedMark, String(process.pid));
  process.stdout.write('npm test: starting a single-node Slurm for the Slurm tests (scripts/slurm-local.sh up)\n');
  spawnSync(slurm, ['up'], { stdio: 'inherit' });
}

const turbo = spawnSync('npx', ['turbo', 'run', 'test', '--concurrency=1', '--continue', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});

if (canStart) {
  rmSync(join(users, String(process.pid)), { force: true });
  const others = readdirSync(users).filter((name) => {
    if (name === 'started') return false;
    if (running(Number(name))) return true;
    rmSync(join(users, name), { force: true }); // a run that died without saying so
    return false;
  });
  const startedByATestRun = startedSlurm || existsSync(startedMark);
  if (startedByATestRun && others.length === 0) {
    rmSync(startedMark, { force: true });
    spawnSync(slurm, ['down'], { stdio: 'inherit' });
  } else if (startedByATestRun)
    process.stdout.write(`npm test: left Slurm up for ${others.length} other test run(s) (pid ${others.join(', ')})\n`);
}

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

// Whether a pid names a live process (not a zombie).
function running(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !/^\d+ \(.*\) [ZX] /s.test(stat);
  } catch {
    return false;
  }
}
