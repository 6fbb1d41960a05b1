#!/usr/bin/env node
// Runs every benchmark measure and prints one table per measure plus a summary.
//
//   node bench/run.js [--quick] [--json [FILE]] [--only NAME[,NAME…]]
//
// `npm run bench` builds first, then runs this. --quick: fewer rounds and smaller inputs
// (well under a minute); --json: also write machine-readable results (default
// bench/results.json); --only: run just the named measures (repeatable or comma list).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine, renderMeasure, renderSummary, root, skipped } from './lib.js';

/** Every measure, in the order they run. Each file exports name, title and measure(opts). */
const MEASURES = [
  'settle-cli-start',
  'capture',
  'spawn-copied',
  'cgroup-join',
  'stream-throughput',
  'teardown-accuracy',
  'journal-append',
  'journal-validate',
  'runplan-overhead',
  'runplan-makespan',
  'runplan-scaling',
  'resume-decision',
  'status-read',
  'report-write',
];

const usage = 'usage: node bench/run.js [--quick] [--json [FILE]] [--only NAME[,NAME...]]';

// Child mode (`--child NAME [--quick]`): run one measure and print its result as one JSON
// line. Each measure runs in its own node process, so one that cannot load a package (a
// neighbour rebuilding dist/ mid-run) or that grows the heap cannot disturb the others.
if (process.argv[2] === '--child') {
  const mod = await import(`./${process.argv[3]}.js`);
  const result = await mod.measure({ quick: process.argv.includes('--quick'), log: (line) => process.stderr.write(`  · ${line}\n`) });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

function parseFlags(argv) {
  const flags = { quick: false, json: undefined, only: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') flags.quick = true;
    else if (a === '--json') {
      const next = argv[i + 1];
      flags.json = next !== undefined && !next.startsWith('--') ? resolve(argv[++i]) : join(root, 'bench', 'results.json');
    } else if (a.startsWith('--json=')) flags.json = resolve(a.slice('--json='.length));
    else if (a === '--only') flags.only.push(...(argv[++i] ?? '').split(','));
    else if (a.startsWith('--only=')) flags.only.push(...a.slice('--only='.length).split(','));
    else if (a === '-h' || a === '--help') {
      process.stdout.write(`${usage}\nmeasures: ${MEASURES.join(', ')}\n`);
      process.exit(0);
    } else {
      process.stderr.write(`bench: usage: unknown argument ${a}\n  hint: ${usage}\n`);
      process.exit(2);
    }
  }
  const unknown = flags.only.filter((n) => n !== '' && !MEASURES.includes(n));
  if (unknown.length > 0) {
    process.stderr.write(`bench: usage: no measure named ${unknown.join(', ')}\n  hint: one of ${MEASURES.join(', ')}\n`);
    process.exit(2);
  }
  flags.only = flags.only.filter((n) => n !== '');
  return flags;
}

// Runs one measure in a child process; progress lines (`  · …`) pass through as they come.
function runChild(name) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', name, ...(flags.quick ? ['--quick'] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => {
      stderr += c;
      const lines = stderr.split('\n');
      stderr = lines.pop();
      for (const line of lines) {
        if (line.startsWith('  · ')) process.stderr.write(`${line}\n`);
        else child.errors = `${child.errors ?? ''}${line}\n`;
      }
    });
    child.on('close', (status) => done({ status, stdout, stderr: `${child.errors ?? ''}${stderr}` }));
  });
}

const flags = parseFlags(process.argv.slice(2));
const selected = flags.only.length > 0 ? MEASURES.filter((m) => flags.only.includes(m)) : MEASURES;
const before = machine();

console.log(`# runplan bench${flags.quick ? ' (--quick)' : ''}`);
console.log(
  `${before.date} · ${before.nproc} × ${before.cpu} · ${before.memoryGiB} GiB · node ${before.node} · Linux ${before.kernel} · ${before.disk} · load ${before.loadavg}\n`,
);

const results = [];
for (const name of selected) {
  const started = performance.now();
  const child = await runChild(name);
  let result;
  try {
    if (child.status !== 0) throw new Error(child.stderr.trim().split('\n').slice(-1)[0] || `exit ${child.status}`);
    result = JSON.parse(child.stdout.trim().split('\n').pop());
  } catch (e) {
    // A measure that cannot run (a package not built, a tool missing) says so and the rest go on.
    result = skipped(name, 'failed to run', (e instanceof Error ? e.message : String(e)).split('\n')[0]);
    process.exitCode = 1;
  }
  result.name ??= name;
  result.seconds = (performance.now() - started) / 1000;
  results.push(result);
  console.log(`${renderMeasure(result)}\n  (${result.seconds.toFixed(1)} s)\n`);
}

const after = machine();
console.log('# summary');
console.log(renderSummary(results));
console.log(`\nload average before ${before.loadavg}, after ${after.loadavg}`);

if (flags.json) {
  const strip = (r) => ({
    ...r,
    rows: r.rows.map(({ values, ...rest }) => ({ ...rest, values: values.map((v) => Math.round(v * 1000) / 1000) })),
  });
  writeFileSync(
    flags.json,
    JSON.stringify({ machine: before, loadavgAfter: after.loadavg, quick: flags.quick, results: results.map(strip) }, null, 2) + '\n',
  );
  console.log(`results written to ${flags.json}`);
}
