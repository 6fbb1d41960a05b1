// `runplan run` of a plan of 50 trivial tasks (each `touch tNN.txt`, committed by runplan
// and fast-forwarded onto the integration branch, one at a time) against
// bench/runplan-baseline.sh doing the same git commands and the same fsyncs per task in
// POSIX sh. Each round uses a fresh repository; both must end with 50 new commits.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, git, gitEnv, interleave, makeRepo, now, pairedRatio, ratio, reapedCpuMs, root, row, scratch, skipped } from './lib.js';

export const name = 'runplan-overhead';
export const title = '`runplan run`, 50 trivial tasks vs a shell script doing the same git + fsync work';

const runplanBin = join(root, 'packages/runplan/bin/runplan.js');
const baseline = join(root, 'bench/runplan-baseline.sh');
const nodeFloor = join(root, 'bench/runplan-node-floor.js');

// A plan of n independent tasks that each create one file (no shell: /usr/bin/touch).
export function trivialPlan(slug, n) {
  const tasks = Array.from(
    { length: n },
    (_, i) => `[[tasks]]\nid = "t${String(i + 1).padStart(String(n).length, '0')}"\nexpect = "commit"\n`,
  ).join('\n');
  return `slug = "${slug}"\nbase = "main"\njobs = 1\n\n[defaults]\ncommand = ["/usr/bin/touch", "{{task.id}}.txt"]\nformat = "text"\ndeadline = "1m"\ngrace = "2s"\n\n${tasks}`;
}

// Why the coordinator cannot be measured here, or undefined when it can.
function unavailable() {
  if (!existsSync(join(root, 'packages/runplan/dist/src/cli.js')))
    return 'not available yet: packages/runplan is not built (npm run build)';
  return undefined;
}

// CPU time (user + sys, ms) of each round's whole process tree — runplan or sh and every git,
// touch and sync under it — by side: unlike wall time, not inflated by other load.
const cpu = { runplan: [], shell: [], node: [] };
// The coordinator process alone (runplan, or the node floor's one process): its CPU time and
// voluntary context switches, from bench/self-usage.cjs.
const self = { runplan: [], node: [] };
const selfUsage = join(root, 'bench/self-usage.cjs');

// One round: a fresh repo, the tool or the baseline, checked to have made n commits. Returns ms.
function round(side, n) {
  const dir = scratch('overhead');
  try {
    const repo = makeRepo(join(dir.path, 'repo'));
    let argv;
    if (side === 'runplan') {
      writeFileSync(join(dir.path, 'plan.toml'), trivialPlan('bench', n));
      argv = [process.execPath, runplanBin, 'run', join(dir.path, 'plan.toml'), '--repo', repo];
    } else if (side === 'node') {
      argv = [process.execPath, nodeFloor, repo, join(repo, '.git', 'runplan'), String(n)];
    } else {
      argv = ['sh', baseline, repo, join(repo, '.git', 'runplan'), String(n)];
    }
    const usage = join(dir.path, 'usage.json');
    const env = gitEnv();
    if (side !== 'shell') {
      env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${selfUsage}`.trim();
      env.BENCH_SELF_USAGE = usage;
      env.BENCH_SELF_USAGE_PARENT = String(process.pid);
    }
    const cpuBefore = reapedCpuMs();
    const start = now();
    const r = spawnSync(argv[0], argv.slice(1), { cwd: repo, env, encoding: 'utf8', maxBuffer: 1 << 26 });
    const ms = now() - start;
    cpu[side].push(reapedCpuMs() - cpuBefore);
    if (r.status !== 0) throw new Error(`${side} exited ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
    const commits = Number(git(repo, ['rev-list', '--count', 'main..refs/heads/runplan/bench']));
    if (commits !== n) throw new Error(`${side} left ${commits} commits on runplan/bench, expected ${n}`);
    if (side !== 'shell') self[side].push(JSON.parse(readFileSync(usage, 'utf8')));
    return ms;
  } finally {
    dir.cleanup();
  }
}

export async function measure({ quick }) {
  const why = unavailable();
  if (why) return skipped(name, title, why);
  chmodSync(baseline, 0o755);
  const n = quick ? 10 : 50;
  const v = await interleave(
    [
      { key: 'runplan', run: () => round('runplan', n) },
      { key: 'shell', run: () => round('shell', n) },
      { key: 'node', run: () => round('node', n) },
    ],
    { rounds: quick ? 1 : 3, warmup: 0 },
  );
  const rows = [
    row(`runplan run, ${n} tasks`, 'ms', v.runplan),
    row(`shell baseline, ${n} tasks`, 'ms', v.shell),
    row(`node floor: the shell's work from node (plain spawn), ${n} tasks`, 'ms', v.node),
  ];
  const [tool, shell, floor] = rows.map((r) => r.median);
  // Warm-up rounds (if any) are in cpu[] too: keep the rounds the wall-time rows cover.
  const cpuOf = (side) => cpu[side].slice(-v[side].length);
  const cpuRows = [
    row(`cpu: runplan run, ${n} tasks`, 'ms', cpuOf('runplan')),
    row(`cpu: shell baseline, ${n} tasks`, 'ms', cpuOf('shell')),
    row(`cpu: node floor, ${n} tasks`, 'ms', cpuOf('node')),
  ];
  rows.push(...cpuRows);
  const selfOf = (side, key) => self[side].slice(-v[side].length).map((u) => u[key]);
  const selfRows = [
    row('coordinator process alone, cpu: runplan', 'ms', selfOf('runplan', 'cpuMs')),
    row('coordinator process alone, cpu: node floor', 'ms', selfOf('node', 'cpuMs')),
    row('coordinator process alone, voluntary context switches: runplan', 'switches', selfOf('runplan', 'voluntary')),
    row('coordinator process alone, voluntary context switches: node floor', 'switches', selfOf('node', 'voluntary')),
  ];
  rows.push(...selfRows);
  return {
    name,
    title,
    rows,
    ratios: [
      ratio('runplan / shell', pairedRatio(v.runplan, v.shell), {
        limit: 1.3,
        better: 'lower',
        meaning: 'wall time of the whole run relative to the same git + fsync work in sh',
      }),
      context(
        'node floor / shell',
        pairedRatio(v.node, v.shell),
        "the same git + fsync work from one node process with plain spawn: what forking from node instead of sh costs, before any of runplan's logic",
      ),
      context('runplan / node floor', pairedRatio(v.runplan, v.node), 'runplan relative to that node floor: what its own logic adds'),
      context('node floor: added per task', (floor - shell) / n, 'ms the node floor spends per task beyond the shell', 'ms'),
      context('runplan per task', tool / n, 'ms of wall time per task, start-up included', 'ms'),
      context('added per task', (tool - shell) / n, 'ms runplan spends per task beyond the shell doing the same work', 'ms'),
      context(
        'cpu: runplan / shell',
        pairedRatio(cpuOf('runplan'), cpuOf('shell')),
        'the same comparison in CPU time (user+sys) of the whole process tree, which other load on the machine does not inflate',
      ),
      context(
        'cpu: added per task',
        (cpuRows[0].median - cpuRows[1].median) / n,
        'ms of CPU runplan spends per task beyond the shell',
        'ms',
      ),
    ],
    notes: [
      `tasks: ["/usr/bin/touch", "{{task.id}}.txt"], format text, jobs 1; each round a fresh repo`,
      `the coordinator alone (getrusage of its one process, no children): runplan ${((selfRows[0].median - selfRows[1].median) / n).toFixed(1)} ms of CPU and ${((selfRows[2].median - selfRows[3].median) / n).toFixed(0)} context switches a task beyond the node floor`,
    ],
  };
}
