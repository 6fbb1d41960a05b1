// Cold start of the settle CLI: `settle -- /bin/true` against `node -e 0` (the floor any
// Node CLI pays) and GNU `timeout 60 /bin/true` (what settle replaces, for context).
// Each variant is a fresh process, timed from spawn to exit; every run must exit 0.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildBundle, bundlePath } from './bundle-settle.js';
import { context, interleave, now, pairedRatio, ratio, reapedCpuMs, root, row, skipped } from './lib.js';

export const name = 'settle-cli-start';
export const title = '`settle -- /bin/true` cold start vs `node -e 0`';

const cpu = {};

// Spawns argv with stdin from /dev/null and piped output; returns wall ms to exit and
// adds the CPU time the process (and its children) used to cpu[key].
function startToExit(key, argv) {
  const cpuBefore = reapedCpuMs();
  const start = now();
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = now() - start;
  (cpu[key] ??= []).push(reapedCpuMs() - cpuBefore);
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status ?? r.signal}: ${String(r.stderr).trim()}`);
  return ms;
}

export async function measure({ quick }) {
  const settleBin = join(root, 'packages/settle/bin/settle.js');
  if (!existsSync(join(root, 'packages/settle/dist/src/cli.js'))) return skipped(name, title, 'not available yet: packages/settle is not built (npm run build)');
  const node = process.execPath;
  const variants = [
    { key: 'node', run: () => startToExit('node', [node, '-e', '0']) },
    { key: 'settle', run: () => startToExit('settle', [node, settleBin, '--', '/bin/true']) },
    { key: 'timeout', run: () => startToExit('timeout', ['timeout', '60', '/bin/true']) },
  ];
  // What the start is made of: loading the CLI's modules, and one spawn + wait from node.
  const cliModule = join(root, 'packages/settle/dist/src/cli.js');
  variants.push(
    { key: 'import', run: () => startToExit('import', [node, '--input-type=module', '-e', `await import(${JSON.stringify(cliModule)})`]) },
    { key: 'spawn', run: () => startToExit('spawn', [node, '-e', "require('child_process').spawn('/bin/true', { stdio: ['ignore', 'pipe', 'pipe'] }).on('exit', () => {})"]) },
  );
  // The bundle prototype is rebuilt from the current dist whenever esbuild is at hand
  // ($ESBUILD_DIR or /tmp/esbuild-scratch, never a repo dependency), so it is never stale.
  const bundle = bundlePath();
  let haveBundle = false;
  try {
    await buildBundle({ esbuildDir: process.env.ESBUILD_DIR ?? '/tmp/esbuild-scratch' });
    haveBundle = existsSync(bundle);
  } catch {
    haveBundle = false;
  }
  if (haveBundle) variants.push({ key: 'bundle', run: () => startToExit('bundle', [node, bundle, '--', '/bin/true']) });
  const v = await interleave(variants, { rounds: quick ? 6 : 30, warmup: 2 });

  // The warm-up runs are in cpu[] too: drop them so wall and CPU cover the same runs.
  const cpuRows = (key, label) => row(`cpu: ${label}`, 'ms', cpu[key].slice(-v[key].length), { show: 'mean' });
  const rows = [
    row('node -e 0', 'ms', v.node),
    row('settle -- /bin/true', 'ms', v.settle),
    row('timeout 60 /bin/true', 'ms', v.timeout),
  ];
  const base = rows[0].median;
  const ratios = [
    ratio('settle / node -e 0', pairedRatio(v.settle, v.node), { limit: 1.3, better: 'lower', meaning: 'how much slower the CLI starts, runs /bin/true and exits than an empty node' }),
    context('settle / timeout', pairedRatio(v.settle, v.timeout), 'cost of a Node tool over the C one it replaces'),
  ];
  rows.push(row('part: node + import settle CLI modules (no run)', 'ms', v.import), row('part: node + one spawn of /bin/true', 'ms', v.spawn));
  const cpuNode = cpuRows('node', 'node -e 0');
  const cpuSettle = cpuRows('settle', 'settle -- /bin/true');
  ratios.push(context('cpu: settle / node -e 0', cpuSettle.mean / cpuNode.mean, 'the same ratio in CPU time (user+sys), which other load on the machine does not inflate'));
  ratios.push(context('floor: node + one spawn / node -e 0', pairedRatio(v.spawn, v.node), 'what any node CLI that spawns one child pays, before settle does anything of its own'));
  const importMs = rows[3].median - base;
  const spawnMs = rows[4].median - base;
  const notes = [
    `settle adds ${(rows[1].median - base).toFixed(1)} ms over node -e 0: loading its modules ≈ ${importMs.toFixed(1)} ms, one spawn from node ≈ ${spawnMs.toFixed(1)} ms, the rest (ownership scan of /proc, pipes, exit) ≈ ${(rows[1].median - base - importMs - spawnMs).toFixed(1)} ms`,
  ];
  if (haveBundle) {
    rows.push(row('bundled settle (prototype)', 'ms', v.bundle));
    const cpuBundle = cpuRows('bundle', 'bundled settle');
    ratios.push(ratio('bundle / node -e 0', pairedRatio(v.bundle, v.node), { limit: 1.3, better: 'lower', meaning: 'the same CLI as one esbuild file (bench/bundle-settle.js)' }));
    ratios.push(context('cpu: bundle / node -e 0', cpuBundle.mean / cpuNode.mean, 'the bundle in CPU time'));
    rows.push(cpuBundle);
  } else {
    notes.push('bundle prototype not measured: esbuild not found (install it in a scratch dir, see bench/bundle-settle.js)');
  }
  rows.push(cpuNode, cpuSettle);
  return { name, title, rows, ratios, notes };
}
