// Makespan of 32 tasks of `sleep 1` with `jobs = 8` (an ideal of 4 s) against
// bench/runplan-parallel-baseline.sh doing the same work 8 at a time in POSIX sh (the same
// git commands per task, attempt dirs, mark files, fsyncs and journal fdatasyncs; what it
// leaves out is in its header). `jobs = 32` is reported too, without a target. A second
// baseline, bench/runplan-parallel-node-floor.js, does the shell's work from one Node process
// (plain spawn, the fsyncs on the thread pool): the floor any Node coordinator starts from,
// since Node forks every child on its one JavaScript thread. Each round uses a fresh
// repository; the order alternates round by round.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, gitEnv, interleave, makeRepo, now, pairedRatio, ratio, root, row, scratch, skipped } from './lib.js';

export const name = 'runplan-makespan';
export const title = 'makespan of 32 × `sleep 1`, jobs 8 (and 32), vs a shell doing the same work 8 (32) at a time';

const runplanBin = join(root, 'packages/runplan/bin/runplan.js');
const baseline = join(root, 'bench/runplan-parallel-baseline.sh');
const nodeFloor = join(root, 'bench/runplan-parallel-node-floor.js');

// A plan of n independent tasks that each sleep a second and change nothing.
export function sleepPlan(slug, n, jobs) {
  const width = String(n).length;
  const tasks = Array.from({ length: n }, (_, i) => `[[tasks]]\nid = "t${String(i + 1).padStart(width, '0')}"\n`).join('\n');
  return `slug = "${slug}"\nbase = "main"\njobs = ${jobs}\n\n[defaults]\ncommand = ["/bin/sleep", "1"]\nexpect = "none"\nformat = "text"\ndeadline = "1m"\ngrace = "2s"\n\n${tasks}`;
}

// One round: a fresh repo, runplan or the shell, n tasks `jobs` at a time. Returns ms.
function round(side, n, jobs) {
  const dir = scratch('makespan');
  try {
    const repo = makeRepo(join(dir.path, 'repo'));
    let argv;
    if (side === 'runplan') {
      writeFileSync(join(dir.path, 'plan.toml'), sleepPlan('bench', n, jobs));
      argv = [process.execPath, runplanBin, 'run', join(dir.path, 'plan.toml'), '--repo', repo];
    } else if (side === 'node') {
      argv = [process.execPath, nodeFloor, repo, join(repo, '.git', 'runplan'), String(n), String(jobs)];
    } else {
      argv = ['sh', baseline, repo, join(repo, '.git', 'runplan'), String(n), String(jobs)];
    }
    const start = now();
    const r = spawnSync(argv[0], argv.slice(1), { cwd: repo, env: gitEnv(), encoding: 'utf8', maxBuffer: 1 << 26 });
    const ms = now() - start;
    if (r.status !== 0) throw new Error(`${side} exited ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
    return ms;
  } finally {
    dir.cleanup();
  }
}

export async function measure({ quick }) {
  if (!existsSync(join(root, 'packages/runplan/dist/src/cli.js')))
    return skipped(name, title, 'not available yet: packages/runplan is not built (npm run build)');
  chmodSync(baseline, 0o755);
  const n = 32;
  const v = await interleave(
    [
      { key: 'runplan8', run: () => round('runplan', n, 8) },
      { key: 'shell8', run: () => round('shell', n, 8) },
      { key: 'node8', run: () => round('node', n, 8) },
      { key: 'runplan32', run: () => round('runplan', n, 32) },
      { key: 'shell32', run: () => round('shell', n, 32) },
    ],
    { rounds: quick ? 1 : 3, warmup: 0 },
  );
  const rows = [
    row(`runplan run, ${n} × sleep 1, jobs 8`, 'ms', v.runplan8),
    row(`shell, ${n} × sleep 1, 8 at a time`, 'ms', v.shell8),
    row(`node floor: the shell's work from node, 8 at a time`, 'ms', v.node8),
    row(`runplan run, ${n} × sleep 1, jobs 32`, 'ms', v.runplan32),
    row(`shell, ${n} × sleep 1, 32 at a time`, 'ms', v.shell32),
  ];
  return {
    name,
    title,
    rows,
    ratios: [
      ratio('jobs 8: runplan / shell', pairedRatio(v.runplan8, v.shell8), {
        limit: 1.1,
        better: 'lower',
        meaning: 'makespan of the whole run relative to the same work done 8 at a time in sh',
      }),
      context(
        'jobs 8: node floor / shell',
        pairedRatio(v.node8, v.shell8),
        'the same work from one node process: the floor of a node coordinator',
      ),
      context('jobs 8: runplan / node floor', pairedRatio(v.runplan8, v.node8), 'what runplan adds over that floor'),
      context('jobs 8: runplan / ideal', rows[0].median / ((n / 8) * 1000), 'makespan over 4 s, the sleeps alone'),
      context('jobs 8: shell / ideal', rows[1].median / ((n / 8) * 1000), 'the baseline over the same ideal'),
      context('jobs 32: runplan / shell', pairedRatio(v.runplan32, v.shell32), 'the same with every task at once (no target)'),
      context('jobs 32: runplan / ideal', rows[3].median / 1000, 'makespan over 1 s, the sleeps alone'),
    ],
    notes: [`tasks: ["/bin/sleep", "1"], expect none, format text; each round a fresh repo`],
  };
}
