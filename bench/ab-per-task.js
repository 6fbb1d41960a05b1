// A/B: `runplan run` of N trivial tasks (runplan-overhead's plan, jobs 1), another built
// checkout's bin against this tree's, alternating rounds (A B, B A, …), each round a fresh repo.
// Prints each round, then each side's median ms a task and the median of the paired ratios.
// node bench/ab-per-task.js OLD_ROOT [N] [ROUNDS]   (OLD_ROOT: another built checkout, or a dir
// holding a copy of packages/runplan/{bin,dist,package.json} as packages/runplan; not part of
// `npm run bench`)
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitEnv, makeRepo, now, pairedRatio, root, scratch, stats } from './lib.js';
import { trivialPlan } from './runplan-overhead.js';

const [oldRoot, n = '50', rounds = '8'] = process.argv.slice(2);
if (oldRoot === undefined) throw new Error('usage: node bench/ab-per-task.js OLD_ROOT [N] [ROUNDS]');
const tasks = Number(n);
const sides = { old: join(oldRoot, 'packages/runplan/bin/runplan.js'), new: join(root, 'packages/runplan/bin/runplan.js') };

// One run of `bin` on a fresh repository; ms of wall time, checked to have made every commit.
function once(bin) {
  const dir = scratch('ab-per-task');
  try {
    const repo = makeRepo(join(dir.path, 'repo'));
    writeFileSync(join(dir.path, 'plan.toml'), trivialPlan('bench', tasks));
    const t0 = now();
    const r = spawnSync(process.execPath, [bin, 'run', join(dir.path, 'plan.toml'), '--repo', repo], {
      cwd: repo,
      env: gitEnv(),
      encoding: 'utf8',
    });
    const ms = now() - t0;
    if (r.status !== 0) throw new Error(`${bin} exited ${r.status ?? r.signal}: ${r.stderr.slice(-400)}`);
    const commits = Number(git(repo, ['rev-list', '--count', 'main..refs/heads/runplan/bench']));
    if (commits !== tasks) throw new Error(`${bin} left ${commits} commits, expected ${tasks}`);
    return ms;
  } finally {
    dir.cleanup();
  }
}

const out = { old: [], new: [] };
for (let r = 0; r < Number(rounds); r++)
  for (const k of r % 2 ? ['new', 'old'] : ['old', 'new']) {
    const ms = once(sides[k]);
    out[k].push(ms);
    console.log(k, (ms / tasks).toFixed(1), 'ms a task');
  }
const perTask = (k) => (stats(out[k]).median / tasks).toFixed(1);
console.log(
  `old ${perTask('old')} ms a task, new ${perTask('new')} ms a task, new / old ${pairedRatio(out.new, out.old).toFixed(3)}× (median of pairs)`,
);
