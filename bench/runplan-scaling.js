// Whether any per-task cost grows with the plan: `runplan run` of 400 trivial tasks against
// 50 (the runplan-overhead plan: `touch tNN.txt`, committed and fast-forwarded, jobs 1),
// compared per task. Each round uses fresh repositories; the order alternates round by round.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, git, gitEnv, interleave, makeRepo, now, pairedRatio, ratio, reapedCpuMs, root, row, scratch, skipped } from './lib.js';
import { trivialPlan } from './runplan-overhead.js';

export const name = 'runplan-scaling';
export const title = '`runplan run` per task, 400 vs 50 trivial tasks (jobs 1)';

const runplanBin = join(root, 'packages/runplan/bin/runplan.js');
const cpu = {};

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
    ],
    { rounds: quick ? 1 : 2, warmup: 0 },
  );
  const rows = [
    row(`wall per task, ${small} tasks`, 'ms', v.small),
    row(`wall per task, ${large} tasks`, 'ms', v.large),
    row(`cpu per task, ${small} tasks`, 'ms', cpu[small]),
    row(`cpu per task, ${large} tasks`, 'ms', cpu[large]),
  ];
  const marginal = (rows[1].median * large - rows[0].median * small) / (large - small);
  return {
    name,
    title,
    rows,
    ratios: [
      ratio(`per task: ${large} / ${small} tasks`, pairedRatio(v.large, v.small), {
        limit: 1.05,
        better: 'lower',
        meaning: 'wall time per task of the large plan over the small one: 1 when no cost grows with the plan',
      }),
      context(`cpu per task: ${large} / ${small}`, pairedRatio(cpu[large], cpu[small]), 'the same in CPU time of the whole process tree'),
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
