// How settle puts a child in its cgroup before the child's first instruction, the two ways
// issue 19 names, against a plain spawn with no cgroup: (a) settle writes itself into the new
// cgroup's cgroup.procs, makes the synchronous spawn() there (the fork inherits the cgroup)
// and writes itself back; (b) the child is started through a tiny exec wrapper — `sh -c`
// writing its own pid into cgroup.procs, then exec'ing the command (no static helper binary
// ships with settle, so the smallest wrapper at hand is the system's sh). Every variant
// makes and removes a cgroup per call except the baseline; all wait for 'close'.
import { spawn } from 'node:child_process';
import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { built, context, interleave, now, pairedRatio, ratio, row, skipped, stats } from './lib.js';

export const name = 'cgroup-join';
export const title = 'putting /bin/true in a fresh cgroup: settle joins around spawn() vs an exec wrapper';

const wrapper = 'echo 0 > "$1/cgroup.procs" && shift && exec "$@"';

// Spawns argv (optionally after `before`, then `after` synchronously around the spawn) and resolves on 'close'.
function run(argv, around = {}) {
  return new Promise((resolve, reject) => {
    around.before?.();
    let child;
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    } finally {
      around.after?.();
    }
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', resolve);
  });
}

// Mean ms per call over `batch` sequential calls.
async function perCall(batch, call) {
  const start = now();
  for (let i = 0; i < batch; i++) await call(i);
  return (now() - start) / batch;
}

export async function measure({ quick }) {
  if (!built('settle')) return skipped(name, title, 'not available yet: packages/settle is not built (npm run build)');
  const { cgroupParentDir, ownCgroupDir } = await import('@runplan/settle');
  const parent = cgroupParentDir(undefined);
  const home = ownCgroupDir();
  if (!parent.ok || !home.ok) return skipped(name, title, `no cgroup v2 directory: ${parent.ok ? '' : parent.fallback.message}`);
  const batch = quick ? 10 : 20;
  let n = 0;
  const fresh = () => {
    const dir = join(parent.value, `settle-bench-${process.pid}-${n++}`);
    mkdirSync(dir);
    return dir;
  };
  // Where the join's cost goes, phase by phase: each synchronous step of a call timed on its
  // own (µs per call, the mean of a batch), the same steps as `self` below.
  const phases = { mkdir: [], join: [], spawnIn: [], leave: [], rmdir: [], spawnOut: [] };
  const phased = async () => {
    const sum = { mkdir: 0, join: 0, spawnIn: 0, leave: 0, rmdir: 0, spawnOut: 0 };
    for (let i = 0; i < batch; i++) {
      let t = now();
      const dir = fresh();
      sum.mkdir += now() - t;
      await run(['/bin/true'], {
        before: () => {
          t = now();
          writeFileSync(join(dir, 'cgroup.procs'), '0');
          sum.join += now() - t;
          t = now();
        },
        after: () => {
          sum.spawnIn += now() - t;
          t = now();
          writeFileSync(join(home.value, 'cgroup.procs'), '0');
          sum.leave += now() - t;
        },
      });
      t = now();
      rmdirSync(dir);
      sum.rmdir += now() - t;
      await run(['/bin/true'], { before: () => (t = now()), after: () => (sum.spawnOut += now() - t) });
    }
    for (const key of Object.keys(sum)) phases[key].push((sum[key] / batch) * 1000);
    return 0;
  };
  const v = await interleave(
    [
      { key: 'phased', run: phased },
      { key: 'plain', run: () => perCall(batch, () => run(['/bin/true'])) },
      {
        key: 'self',
        run: () =>
          perCall(batch, async () => {
            const dir = fresh();
            await run(['/bin/true'], {
              before: () => writeFileSync(join(dir, 'cgroup.procs'), '0'),
              after: () => writeFileSync(join(home.value, 'cgroup.procs'), '0'),
            });
            rmdirSync(dir);
          }),
      },
      {
        key: 'wrapper',
        run: () =>
          perCall(batch, async () => {
            const dir = fresh();
            await run(['/bin/sh', '-c', wrapper, 'sh', dir, '/bin/true']);
            rmdirSync(dir);
          }),
      },
    ],
    { rounds: quick ? 4 : 15, warmup: 1 },
  );
  for (const values of Object.values(phases)) values.shift(); // the warmup round's
  const rows = [
    row('spawn, no cgroup', 'ms', v.plain),
    row('settle joins the cgroup around spawn()', 'ms', v.self),
    row('exec wrapper (sh) joins, then execs', 'ms', v.wrapper),
    row('phase: mkdir of the cgroup', 'µs', phases.mkdir),
    row('phase: settle moves itself in (write cgroup.procs)', 'µs', phases.join),
    row('phase: spawn() inside the cgroup', 'µs', phases.spawnIn),
    row('phase: spawn() outside any new cgroup', 'µs', phases.spawnOut),
    row('phase: settle moves itself back', 'µs', phases.leave),
    row('phase: rmdir after the exit', 'µs', phases.rmdir),
  ];
  return {
    name,
    title,
    rows,
    ratios: [
      ratio('join around spawn / no cgroup', pairedRatio(v.self, v.plain), {
        limit: 1.3,
        better: 'lower',
        meaning: 'what the cgroup costs per call the way settle does it (mkdir, two writes, rmdir)',
      }),
      context('exec wrapper / no cgroup', pairedRatio(v.wrapper, v.plain), 'the same through a wrapper program'),
      context('join around spawn / exec wrapper', pairedRatio(v.self, v.wrapper), 'below 1: joining around spawn() is cheaper'),
      context(
        'phases: what the cgroup adds to a spawn',
        ['mkdir', 'join', 'leave', 'rmdir'].reduce((sum, k) => sum + stats(phases[k]).median, 0) +
          stats(phases.spawnIn).median -
          stats(phases.spawnOut).median,
        'µs per call: mkdir + the two moves + rmdir + what spawn() itself takes longer inside the cgroup (the exit is not in it)',
        'µs',
      ),
    ],
    notes: [`each value is the mean of ${batch} sequential calls; cgroups made in ${parent.value}`],
  };
}
