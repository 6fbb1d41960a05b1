// Whether any per-task cost grows with the plan: `runplan run` of 400 trivial tasks against
// 50 (the runplan-overhead plan: `touch tNN.txt`, committed and fast-forwarded, jobs 1),
// compared per task. Each task adds a file, so git's own work per task grows with the tree
// (each `worktree add` checks out every file the earlier tasks added): the same growth is
// measured in bench/runplan-baseline.sh doing the same git work in sh, and the target is
// runplan's growth over the shell's — what runplan itself adds per task as the plan grows.
// Each round uses fresh repositories; the order alternates round by round.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, git, gitEnv, interleave, makeRepo, now, pairedRatio, ratio, reapedCpuMs, root, row, scratch, skipped } from './lib.js';
import { trivialPlan } from './runplan-overhead.js';

const baseline = join(root, 'bench/runplan-baseline.sh');

export const name = 'runplan-scaling';
export const title = '`runplan run` per task, 400 vs 50 trivial tasks (jobs 1)';

const runplanBin = join(root, 'packages/runplan/bin/runplan.js');
const cpu = {};

// The shell baseline's n tasks in a fresh repo, checked as runplan's. Returns ms per task.
function shellPerTask(n) {
  const dir = scratch('scaling-sh');
  try {
    const repo = makeRepo(join(dir.path, 'repo'));
    const start = now();
    const r = spawnSync('sh', [baseline, repo, join(repo, '.git', 'runplan'), String(n)], { cwd: repo, env: gitEnv(), encoding: 'utf8' });
    const ms = now() - start;
    if (r.status !== 0)
      throw new Error(`shell baseline exited ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
    const commits = Number(git(repo, ['rev-list', '--count', 'main..refs/heads/runplan/bench']));
    if (commits !== n) throw new Error(`shell baseline left ${commits} commits, expected ${n}`);
    return ms / n;
  } finally {
    dir.cleanup();
  }
}

// One run of n tasks in a fresh repo, checked to have made n commits. Returns ms per task.
function perTask(n) {
  const dir = scratch('scaling');
  try {
    const repo = makeRepo(join(dir.path, 'repo'));
    writeFileSync(join(dir.path, 'plan.toml'), trivialPlan('bench', n));
    const cpuBefore = reapedCpuMs();
    const start = now();
    const r = spawnSync(process.execPath, [runplanBin, 'run', join(dir.path, 'plan.toml'), '--repo', repo], {
      cwd: repo,
      env: gitEnv(),
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    const ms = now() - start;
    (cpu[n] ??= []).push((reapedCpuMs() - cpuBefore) / n);
    if (r.status !== 0) throw new Error(`runplan exited ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
    const commits = Number(git(repo, ['rev-list', '--count', 'main..refs/heads/runplan/bench']));
    if (commits !== n) throw new Error(`runplan left ${commits} commits, expected ${n}`);
    return ms / n;
  } finally {
    dir.cleanup();
  }
}

export async function measure({ quick }) {
  if (!existsSync(join(root, 'packages/runplan/dist/src/cli.js')))
    return skipped(name, title, 'not available yet: packages/runplan is not built (npm run build)');
  const [small, large] = quick ? [25, 100] : [50, 400];
  const v = await interleave(
    [
      { key: 'small', run: () => perTask(small) },
      { key: 'large', run: () => perTask(large) },
      { key: 'shellSmall', run: () => shellPerTask(small) },
      { key: 'shellLarge', run: () => shellPerTask(large) },
    ],
    { rounds: quick ? 1 : 2, warmup: 0 },
  );
  const rows = [
    row(`wall per task, ${small} tasks`, 'ms', v.small),
    row(`wall per task, ${large} tasks`, 'ms', v.large),
    row(`cpu per task, ${small} tasks`, 'ms', cpu[small]),
    row(`cpu per task, ${large} tasks`, 'ms', cpu[large]),
    row(`shell baseline: wall per task, ${small} tasks`, 'ms', v.shellSmall),
    row(`shell baseline: wall per task, ${large} tasks`, 'ms', v.shellLarge),
  ];
  const growth = pairedRatio(v.large, v.small);
  const shellGrowth = pairedRatio(v.shellLarge, v.shellSmall);
  const marginal = (rows[1].median * large - rows[0].median * small) / (large - small);
  return {
    name,
    title,
    rows,
    ratios: [
      ratio(`per task: ${large} / ${small} tasks, over the shell's`, growth / shellGrowth, {
        limit: 1.05,
        better: 'lower',
        meaning:
          "runplan's per-task growth from the small plan to the large one over the shell baseline's doing the same git work: 1 when runplan adds no cost that grows with the plan",
      }),
      context(
        `per task: ${large} / ${small} tasks`,
        growth,
        'wall time per task of the large plan over the small one (git work growing with the tree included)',
      ),
      context(
        `shell baseline per task: ${large} / ${small}`,
        shellGrowth,
        "the same for the shell baseline: git's own growth with the tree",
      ),
      context(`cpu per task: ${large} / ${small}`, pairedRatio(cpu[large], cpu[small]), 'the same in CPU time of the whole process tree'),
      context(
        `added per task over the shell: ${large} / ${small} tasks`,
        (rows[1].median - rows[5].median) / (rows[0].median - rows[4].median),
        "what runplan spends per task beyond the shell's same git work, large plan over small: 1 or below when none of runplan's own cost grows with the plan",
      ),
      context(
        `marginal task / ${small}-task average`,
        marginal / rows[0].median,
        `what each of the ${large - small} extra tasks costs over the small plan's average task (start-up spread over fewer tasks lowers this)`,
      ),
    ],
    notes: [
      `tasks: ["/usr/bin/touch", "{{task.id}}.txt"], format text, jobs 1; each round a fresh repo${quick ? ' (--quick: 25 vs 100)' : ''}`,
    ],
  };
}
