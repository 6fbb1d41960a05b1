// `runplan report` of a run with 10 000 attempts against the floor of any report: a fresh
// node process that reads the same journal with `readJournal()` (every record parsed and
// checked, as the report's reader does), `JSON.stringify`s the records and writes them to
// a file (temp + rename, as the report is written). Both sides are timed from spawn to
// exit. The run is forged as bench/resume-decision.js forges one (10 000 tasks, each
// attempt-started → … → attempt-closed) plus its run-complete receipt. Once, untimed, the
// HTML is loaded in headless Chromium when one is installed.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { built, context, gitEnv, interleave, makeRepo, now, pairedRatio, ratio, reapedCpuMs, root, row, scratch, skipped } from './lib.js';
import { forgeJournal, loadWithDigests } from './resume-decision.js';
import { trivialPlan } from './runplan-overhead.js';

export const name = 'report-write';
export const title = '`runplan report` of a 10k-attempt run vs readJournal + JSON.stringify of its data + write';

const self = fileURLToPath(import.meta.url);
const runplanBin = join(root, 'packages/runplan/bin/runplan.js');
const SLUG = 'resume';
const RUN_ID = '20261129T075500Z-0a0b';

// Worker: `node report-write.js --worker JOURNAL OUT`: the floor described above.
async function workerMain([journal, out]) {
  const { readJournal } = await import('@runplan/journal');
  const { records, status } = await readJournal(journal);
  if (status.kind !== 'clean') throw new Error(JSON.stringify(status));
  writeFileSync(`${out}.tmp`, JSON.stringify(records));
  renameSync(`${out}.tmp`, out);
}

// A complete run of n tasks, one attempt each, under <dir>/state; returns the repo, state root and journal.
async function forgeRun(dir, n) {
  const repo = makeRepo(join(dir, 'repo'));
  const stateRoot = join(dir, 'state');
  writeFileSync(join(dir, 'plan.toml'), trivialPlan(SLUG, n));
  const loaded = await loadWithDigests(join(dir, 'plan.toml'));
  const commits = loaded.plan.tasks.map((_, i) => i.toString(16).padStart(40, 'c'));
  const base = 'b'.repeat(40);
  const journal = join(stateRoot, SLUG, RUN_ID, 'journal.jsonl');
  mkdirSync(join(stateRoot, SLUG, RUN_ID), { recursive: true });
  const forged = await forgeJournal(journal, loaded.plan, loaded.digests, repo, stateRoot, base, commits);
  const { encodeRecord } = await import('@runplan/journal');
  const lines = readFileSync(journal, 'utf8').trimEnd().split('\n');
  const last = lines.at(-1);
  const receipt = encodeRecord({
    seq: forged.records,
    prev: last.slice(0, 8),
    ts: new Date(Date.UTC(2026, 10, 29, 9)).toISOString(),
    type: 'run-complete',
    data: {
      logicalRunId: RUN_ID,
      branch: `refs/heads/runplan/${SLUG}`,
      resultCommit: commits.at(-1),
      landed: null,
      tasks: n,
      attempts: n,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 },
      costUsd: 0,
      durationMs: 3_600_000,
    },
    terminal: true,
  });
  appendFileSync(journal, receipt.bytes);
  return { repo, stateRoot, journal, records: forged.records + 1 };
}

// Whether headless Chromium loads the report and its script fills the page: 1, 0, or undefined (no Chromium).
function loadsInChromium(file) {
  const browser = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));
  if (browser === undefined) return undefined;
  const r = spawnSync(
    browser,
    ['--headless', '--no-sandbox', '--disable-gpu', '--virtual-time-budget=20000', '--dump-dom', `file://${file}`],
    { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000 },
  );
  return r.status === 0 && /<html/i.test(r.stdout) && r.stdout.includes(RUN_ID) ? 1 : 0;
}

export async function measure({ quick, log }) {
  if (!existsSync(join(root, 'packages/runplan/dist/src/cli.js')) || !built('journal'))
    return skipped(name, title, 'not available yet: packages are not built (npm run build)');
  const n = quick ? 1000 : 10_000;
  const dir = scratch('report');
  try {
    log?.(`report-write: forging a run of ${n} attempts`);
    const { repo, stateRoot, journal, records } = await forgeRun(dir.path, n);
    const html = join(dir.path, 'report.html');
    const floorOut = join(dir.path, 'floor.json');
    const cpu = { report: [], floor: [] };
    const timedChild = (key, argv, out) => () => {
      const before = reapedCpuMs();
      const start = now();
      const r = spawnSync(process.execPath, argv, { cwd: repo, env: gitEnv(), encoding: 'utf8', maxBuffer: 1 << 24 });
      const ms = now() - start;
      cpu[key].push(reapedCpuMs() - before);
      if (r.status !== 0) throw new Error(`${key} exited ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
      if (!existsSync(out)) throw new Error(`${key} wrote no ${out}`);
      return ms;
    };
    const v = await interleave(
      [
        {
          key: 'report',
          run: timedChild('report', [runplanBin, 'report', SLUG, '--repo', repo, '--state-dir', stateRoot, '--out', html], html),
        },
        { key: 'floor', run: timedChild('floor', [self, '--worker', journal, floorOut], floorOut) },
      ],
      { rounds: quick ? 2 : 5, warmup: 1 },
    );
    const keep = (key) => cpu[key].slice(-v[key].length);
    const rows = [
      row(`runplan report (${n} attempts)`, 'ms', v.report),
      row('node + readJournal + JSON.stringify + write', 'ms', v.floor),
      row('cpu: runplan report', 'ms', keep('report')),
      row('cpu: node + readJournal + stringify + write', 'ms', keep('floor')),
    ];
    const ratios = [
      ratio('report / floor', pairedRatio(v.report, v.floor), {
        limit: 3,
        better: 'lower',
        meaning: 'wall time of `runplan report` relative to reading the journal and writing its records as JSON',
      }),
      context('cpu: report / floor', pairedRatio(keep('report'), keep('floor')), 'the same in CPU time'),
    ];
    const notes = [
      `${n} attempts, ${records} records, journal ${(statSync(journal).size / 2 ** 20).toFixed(1)} MiB; report ${(statSync(html).size / 2 ** 20).toFixed(1)} MiB, floor's JSON ${(statSync(floorOut).size / 2 ** 20).toFixed(1)} MiB`,
    ];
    log?.('report-write: loading the report in headless Chromium');
    const loads = loadsInChromium(html);
    if (loads === undefined) notes.push('no Chromium installed: the load check did not run');
    else
      ratios.push(
        ratio('loads in headless Chromium (1 = yes)', loads, {
          limit: 1,
          better: 'higher',
          unit: '',
          meaning: 'chromium --headless --dump-dom of the report exits 0 and its DOM names the run',
        }),
      );
    return { name, title, rows, ratios, notes };
  } finally {
    dir.cleanup();
  }
}

if (process.argv[2] === '--worker') await workerMain(process.argv.slice(3));
