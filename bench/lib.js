// Shared helpers for the benchmark scripts: interleaved rounds, summary statistics,
// ratios against a baseline, and the tables `node bench/run.js` prints.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/ lives directly under it). */
export const root = dirname(dirname(fileURLToPath(import.meta.url)));

export const now = () => performance.now();

/**
 * CPU time (user + system, ms) of every child this process has reaped so far: fields 16
 * and 17 of /proc/self/stat, in clock ticks (100 per second). One reading is coarse (10 ms),
 * but summed over many runs the error stays within a tick or two in total, so the mean
 * CPU cost of a child is exact enough and, unlike wall time, unaffected by other load.
 */
export function reapedCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

// Runs fn and returns how long it took in ms.
export async function timed(fn) {
  const start = now();
  await fn();
  return now() - start;
}

/** Median, min, max, p99 and mean of a list of numbers. */
export function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const at = (q) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))];
  const median = n % 2 === 1 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return { n, median, min: sorted[0], max: sorted[n - 1], p99: at(0.99), mean: values.reduce((a, b) => a + b, 0) / n };
}

/**
 * Runs every variant once per round, alternating the order each round (A B, B A, A B, …)
 * so that drift (a neighbour's test run, a warming cache) lands on both sides. `warmup`
 * rounds run first and are thrown away. Each variant's `run()` returns one measured value.
 * Returns { [key]: number[] }.
 */
export async function interleave(variants, { rounds, warmup = 1 }) {
  const values = Object.fromEntries(variants.map((v) => [v.key, []]));
  for (let r = -warmup; r < rounds; r++) {
    const order = r % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      const value = await v.run();
      if (r >= 0) values[v.key].push(value);
    }
  }
  return values;
}

/**
 * The ratio a/b judged round by round: the median of a[i]/b[i]. Both values of a round
 * were measured moments apart, so a neighbour's load that comes and goes during the run
 * lands on both sides of each ratio instead of on whichever side it happened to hit.
 */
export function pairedRatio(a, b) {
  return stats(a.map((x, i) => x / b[i])).median;
}

/** A table row: a label, a unit and the statistics of its values. */
export function row(label, unit, values, extra = {}) {
  return { label, unit, ...stats(values), values, ...extra };
}

/**
 * A ratio with its target. `better` says which way is good: 'lower' (value ≤ limit) or
 * 'higher' (value ≥ limit). `meaning` is one sentence a reader can check the number against.
 */
export function ratio(name, value, { limit, better, meaning, unit = '×' }) {
  const pass = limit === undefined || !Number.isFinite(value) ? null : better === 'lower' ? value <= limit : value >= limit;
  return {
    name,
    value,
    unit,
    target: limit === undefined ? '' : `${better === 'lower' ? '≤' : '≥'} ${limit}${unit === '×' ? '×' : ` ${unit}`}`,
    pass,
    meaning,
  };
}

/** A ratio with no target (context only). */
export const context = (name, value, meaning, unit = '×') => ratio(name, value, { meaning, unit });

// Formats a value of a unit for a table.
export function format(value, unit) {
  if (value === undefined || value === null || Number.isNaN(value)) return '–';
  switch (unit) {
    case 'ms':
      return value >= 1000
        ? `${(value / 1000).toFixed(2)} s`
        : value >= 100
          ? `${value.toFixed(0)} ms`
          : `${value.toFixed(value >= 10 ? 1 : 2)} ms`;
    case 'µs':
      return `${value.toFixed(0)} µs`;
    case 'MiB/s':
      return `${value.toFixed(0)} MiB/s`;
    case 'MB':
      return `${value.toFixed(0)} MB`;
    case '/s':
      return `${value >= 1000 ? value.toFixed(0) : value.toFixed(1)}/s`;
    case '×':
      return `${value.toFixed(2)}×`;
    default:
      return `${Number.isInteger(value) ? value : value.toFixed(2)} ${unit}`;
  }
}

const pad = (text, width) => text + ' '.repeat(Math.max(0, width - [...text].length));

// Lays out rows of cells as aligned columns.
export function columns(lines) {
  const widths = [];
  for (const line of lines)
    line.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
    });
  return lines.map((line) =>
    line
      .map((cell, i) => (i === line.length - 1 ? cell : pad(cell, widths[i])))
      .join('  ')
      .trimEnd(),
  );
}

/** The text block for one measure's result. */
export function renderMeasure(result) {
  const out = [`## ${result.name} — ${result.title}`];
  if (result.skipped) {
    out.push(`  skipped: ${result.skipped}`);
    for (const note of result.notes ?? []) out.push(`  note: ${note}`);
    return out.join('\n');
  }
  const lines = [['', 'variant', 'median', 'min–max', 'n']];
  for (const r of result.rows) {
    if (r.show === 'mean') lines.push(['', r.label, `${format(r.mean, r.unit)} (mean)`, '', String(r.n)]);
    else lines.push(['', r.label, format(r.median, r.unit), `${format(r.min, r.unit)} – ${format(r.max, r.unit)}`, String(r.n)]);
  }
  out.push(...columns(lines));
  if (result.ratios.length > 0) {
    out.push('');
    const rl = result.ratios.map((q) => ['', q.name, format(q.value, q.unit), q.target, verdict(q.pass)]);
    out.push(...columns(rl));
  }
  for (const note of result.notes ?? []) out.push(`  note: ${note}`);
  return out.join('\n');
}

export const verdict = (pass) => (pass === null ? '' : pass ? 'ok' : 'MISSED');

/** The summary table over every measure: one line per ratio. */
export function renderSummary(results) {
  const lines = [['measure', 'ratio', 'value', 'target', '']];
  for (const r of results) {
    if (r.skipped) {
      lines.push([r.name, 'skipped', '', '', '']);
      continue;
    }
    for (const q of r.ratios) if (q.target !== '') lines.push([r.name, q.name, format(q.value, q.unit), q.target, verdict(q.pass)]);
  }
  return columns(lines).join('\n');
}

// ", no journal" for an ext4 without one (jbd2 lists each journal it runs in /proc/fs/jbd2 as
// DEVICE-N): there every round that deletes a repository slows the next (scripts/bench-fs.sh).
function journalNote(device, fsType) {
  if (fsType !== 'ext4' || !existsSync('/proc/fs/jbd2')) return '';
  const name = device.split('/').pop();
  return readdirSync('/proc/fs/jbd2').some((j) => j.startsWith(`${name}-`)) ? ' (journal)' : ' (no journal: see scripts/bench-fs.sh)';
}

/** What the numbers were measured on. */
export function machine() {
  const df = spawnSync('df', ['-T', tmpdir()], { encoding: 'utf8' });
  const [device, fsType] = df.status === 0 ? df.stdout.trim().split('\n').pop().split(/\s+/) : [];
  const disk = device ? `${device} ${fsType}${journalNote(device, fsType)}` : 'unknown';
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
    disk: `${tmpdir()} on ${disk}`,
    loadavg: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    date: new Date().toISOString(),
  };
}

/** A scratch directory under the OS temp dir (the same disk as the repo here); removed by cleanup(). */
export function scratch(prefix) {
  const path = mkdtempSync(join(tmpdir(), `runplan-bench-${prefix}-`));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** A skipped result: the measure could not run, and says why. */
export const skipped = (name, title, why, notes = []) => ({ name, title, skipped: why, rows: [], ratios: [], notes });

// Whether the built output of a package exists (`npm run bench` builds first; a bare
// `node bench/run.js` after a fresh clone does not).
export function built(pkg) {
  return existsSync(join(root, 'packages', pkg, 'dist', 'src', 'index.js'));
}

/** Runs a worker script in a fresh node process and parses the one JSON line it prints. */
export function worker(script, args, options = {}) {
  const r = spawnSync(process.execPath, [...(options.nodeArgs ?? []), script, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    ...(options.env ? { env: options.env } : {}),
  });
  if (r.status !== 0)
    throw new Error(
      `worker ${script} ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
    );
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** `git` with no system or global config, so every machine behaves the same. */
export function gitEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', ...extra };
}

// Runs git synchronously; throws with git's stderr on failure.
export function git(cwd, args, input) {
  const r = spawnSync('git', args, { cwd, env: gitEnv(), encoding: 'utf8', input: input ?? '', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** A repository with branch main, one commit, a fixed identity, no gc/maintenance surprises. */
export function makeRepo(path) {
  git(dirname(path), ['init', '-q', '-b', 'main', path]);
  for (const [k, v] of [
    ['user.name', 'bench'],
    ['user.email', 'bench@localhost'],
    ['commit.gpgsign', 'false'],
    ['core.autocrlf', 'false'],
  ])
    git(path, ['config', k, v]);
  git(path, ['commit', '-q', '--allow-empty', '-m', 'init']);
  return path;
}
