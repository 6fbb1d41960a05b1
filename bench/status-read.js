// `runplan status SLUG` of a slug with 100 runs against `validateJournal()` of those 100
// journals, each side a fresh node process timed from spawn to exit (start-up included on
// both sides). The runs are one real `runplan run` of 20 trivial tasks (jobs 1) copied
// under 100 run ids, each journal re-encoded with its own id, start order and chain
// (bench/forge-runs.js), so status reads what a coordinator wrote.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cloneRun, forgedRunId } from './forge-runs.js';
import { built, context, gitEnv, interleave, makeRepo, now, pairedRatio, ratio, reapedCpuMs, root, row, scratch, skipped } from './lib.js';
import { trivialPlan } from './runplan-overhead.js';

export const name = 'status-read';
export const title = '`runplan status` of a slug with 100 runs vs `validateJournal()` of those journals';

const self = fileURLToPath(import.meta.url);
const runplanBin = join(root, 'packages/runplan/bin/runplan.js');

// Worker: `node status-read.js --worker JOURNAL…` validates each journal; exits 1 unless all are clean.
async function workerMain(paths) {
  const { validateJournal } = await import('@runplan/journal');
  for (const path of paths) {
    const v = await validateJournal(path);
    if (v.status.kind !== 'clean' || !v.terminal) {
      process.stderr.write(`${path}: ${JSON.stringify(v.status)}\n`);
      process.exit(1);
    }
  }
}

/** A repo and a state root whose slug `bench` holds `runs` complete runs of `tasks` tasks. */
export async function forgeSlug(dir, { runs, tasks }) {
  const repo = makeRepo(join(dir, 'repo'));
  const source = join(dir, 'source');
  mkdirSync(source);
  writeFileSync(join(dir, 'plan.toml'), trivialPlan('bench', tasks));
  const r = spawnSync(process.execPath, [runplanBin, 'run', join(dir, 'plan.toml'), '--repo', repo, '--state-dir', source], {
    cwd: repo,
    env: gitEnv(),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`runplan run exited ${r.status}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
  const sourceId = readdirSync(join(source, 'bench')).find((n) => n !== 'work');
  const stateRoot = join(dir, 'state');
  const slugDir = join(stateRoot, 'bench');
  mkdirSync(slugDir, { recursive: true, mode: 0o700 });
  const journals = [];
  for (let i = 0; i < runs; i++) {
    const runId = forgedRunId(i);
    const dest = await cloneRun({ source: join(source, 'bench', sourceId), sourceId, slugDir, runId, startOrder: i + 1 });
    rmSync(join(dest, 'report.html'), { force: true });
    journals.push(join(dest, 'journal.jsonl'));
  }
  return { repo, stateRoot, journals };
}

export async function measure({ quick, log }) {
  if (!existsSync(join(root, 'packages/runplan/dist/src/cli.js')) || !built('journal'))
    return skipped(name, title, 'not available yet: packages are not built (npm run build)');
  const runs = 100;
  const tasks = 20;
  const dir = scratch('status');
  try {
    log?.(`status-read: one run of ${tasks} tasks, copied under ${runs} run ids`);
    const { repo, stateRoot, journals } = await forgeSlug(dir.path, { runs, tasks });
    const cpu = { status: [], validate: [] };
    const timedChild = (key, argv) => () => {
      const before = reapedCpuMs();
      const start = now();
      const r = spawnSync(process.execPath, argv, { cwd: repo, env: gitEnv(), encoding: 'utf8', maxBuffer: 1 << 24 });
      const ms = now() - start;
      cpu[key].push(reapedCpuMs() - before);
      if (r.status !== 0) throw new Error(`${key} exited ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
      if (key === 'status' && !/complete/.test(r.stdout)) throw new Error(`status printed no complete row: ${r.stdout.trim()}`);
      return ms;
    };
    const v = await interleave(
      [
        { key: 'status', run: timedChild('status', [runplanBin, 'status', 'bench', '--repo', repo, '--state-dir', stateRoot]) },
        { key: 'validate', run: timedChild('validate', [self, '--worker', ...journals]) },
      ],
      { rounds: quick ? 3 : 10, warmup: 1 },
    );
    const keep = (key) => cpu[key].slice(-v[key].length);
    const rows = [
      row(`runplan status bench (${runs} runs)`, 'ms', v.status),
      row(`node + validateJournal() of the ${runs} journals`, 'ms', v.validate),
      row('cpu: runplan status', 'ms', keep('status')),
      row('cpu: node + validateJournal()', 'ms', keep('validate')),
    ];
    return {
      name,
      title,
      rows,
      ratios: [
        ratio('status / validateJournal()', pairedRatio(v.status, v.validate), {
          limit: 1.5,
          better: 'lower',
          meaning: 'wall time of `runplan status` relative to a node process that only validates every journal of the slug',
        }),
        context('cpu: status / validateJournal()', pairedRatio(keep('status'), keep('validate')), 'the same in CPU time'),
      ],
      notes: [`${runs} complete runs of ${tasks} trivial tasks each (one real run, re-encoded under ${runs} ids)`],
    };
  } finally {
    dir.cleanup();
  }
}

if (process.argv[2] === '--worker') await workerMain(process.argv.slice(3));
