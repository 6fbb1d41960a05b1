// Cold start of the settle CLI: `settle -- /bin/true` against `node -e 0` (the floor any
// Node CLI pays) and GNU `timeout 60 /bin/true` (what settle replaces, for context).
// Each variant is a fresh process, timed from spawn to exit; every run must exit 0.
//
// The bin runs dist/settle.cjs, the CLI as one CommonJS module wrapped in its function (the
// build bundles it with esbuild). Context rows show what that is made of: node loading the
// bundle without running it, node spawning one detached /bin/true (what any Node CLI that
// runs a child pays), and the same bin without the bundle (the ES modules tsc emits, its
// fallback).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { context, interleave, now, pairedRatio, ratio, reapedCpuMs, root, row, scratch, skipped } from './lib.js';

export const name = 'settle-cli-start';
export const title = '`settle -- /bin/true` cold start vs `node -e 0`';

const cpu = {};

// Spawns argv with stdin from /dev/null and piped output; returns wall ms to exit and
// adds the CPU time the process (and its children) used to cpu[key].
function startToExit(key, argv, env = process.env) {
  const cpuBefore = reapedCpuMs();
  const start = now();
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env });
  const ms = now() - start;
  (cpu[key] ??= []).push(reapedCpuMs() - cpuBefore);
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status ?? r.signal}: ${String(r.stderr).trim()}`);
  return ms;
}

// The bin as installed next to a dist/ that holds only part of what the build makes: only
// dist/src (what runs when only tsc ran), or the bundle without its code cache (what the
// cache buys).
function partialBin(dir, holds) {
  const pkg = join(root, 'packages/settle');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, 'dist'));
  for (const file of ['settle.js', 'package.json']) copyFileSync(join(pkg, 'bin', file), join(dir, 'bin', file));
  if (holds === 'src') symlinkSync(join(pkg, 'dist/src'), join(dir, 'dist/src'));
  else copyFileSync(join(pkg, 'dist/settle.cjs'), join(dir, 'dist/settle.cjs'));
  return join(dir, 'bin/settle.js');
}

export async function measure({ quick }) {
  const settleBin = join(root, 'packages/settle/bin/settle.js');
  const bundle = join(root, 'packages/settle/dist/settle.cjs');
  if (!existsSync(join(root, 'packages/settle/dist/src/cli.js')))
    return skipped(name, title, 'not available yet: packages/settle is not built (npm run build)');
  if (!existsSync(bundle))
    return skipped(
      name,
      title,
      'packages/settle/dist/settle.cjs missing: build settle with its own build script (npm run build), which bundles after tsc',
    );
  const node = process.execPath;
  // Node parses the NODE_EXTRA_CA_CERTS bundle at every start (~40 ms here), which inflates
  // `node -e 0` and so flatters every ratio to it: the pair below runs without it.
  const { NODE_EXTRA_CA_CERTS: caCerts, ...bareEnv } = process.env;
  const dir = scratch('settle-start');
  try {
    const fallbackBin = partialBin(join(dir.path, 'unbundled'), 'src');
    const noCacheBin = partialBin(join(dir.path, 'uncached'), 'bundle');
    const variants = [
      { key: 'node', run: () => startToExit('node', [node, '-e', '0']) },
      { key: 'settle', run: () => startToExit('settle', [node, settleBin, '--', '/bin/true']) },
      { key: 'timeout', run: () => startToExit('timeout', ['timeout', '60', '/bin/true']) },
      {
        key: 'load',
        // The bundle is the module wrapped in its function (scripts/stamp.js): compiled (without
        // its cache) and its module body run, as the bin does, but main() never called.
        run: () =>
          startToExit('load', [
            node,
            '-e',
            `const f = ${JSON.stringify(bundle)}; const m = { exports: {} };
             new (require('node:vm').Script)(require('node:fs').readFileSync(f, 'utf8'), { filename: f })
               .runInThisContext().call(m.exports, m.exports, require, m, f, require('node:path').dirname(f));`,
          ]),
      },
      {
        key: 'spawn',
        run: () =>
          startToExit('spawn', [
            node,
            '-e',
            "require('child_process').spawn('/bin/true', { stdio: ['ignore', 'pipe', 'inherit'], detached: true }).on('exit', () => {})",
          ]),
      },
      { key: 'unbundled', run: () => startToExit('unbundled', [node, fallbackBin, '--', '/bin/true']) },
      { key: 'uncached', run: () => startToExit('uncached', [node, noCacheBin, '--', '/bin/true']) },
      ...(caCerts === undefined
        ? []
        : [
            { key: 'bareNode', run: () => startToExit('bareNode', [node, '-e', '0'], bareEnv) },
            { key: 'bareSettle', run: () => startToExit('bareSettle', [node, settleBin, '--', '/bin/true'], bareEnv) },
            {
              key: 'bareSpawn',
              run: () =>
                startToExit(
                  'bareSpawn',
                  [
                    node,
                    '-e',
                    "require('child_process').spawn('/bin/true', { stdio: ['ignore', 'pipe', 'inherit'], detached: true }).on('exit', () => {})",
                  ],
                  bareEnv,
                ),
            },
          ]),
    ];
    const v = await interleave(variants, { rounds: quick ? 6 : 30, warmup: 2 });

    // The warm-up runs are in cpu[] too: drop them so wall and CPU cover the same runs.
    const cpuRows = (key, label) => row(`cpu: ${label}`, 'ms', cpu[key].slice(-v[key].length), { show: 'mean' });
    const rows = [
      row('node -e 0', 'ms', v.node),
      row('settle -- /bin/true', 'ms', v.settle),
      row('timeout 60 /bin/true', 'ms', v.timeout),
      row('part: node + load the CLI bundle (no run)', 'ms', v.load),
      row('part: node + one detached spawn of /bin/true', 'ms', v.spawn),
      row('settle without the bundle (dist/src ES modules)', 'ms', v.unbundled),
      row('settle without its code cache (dist/settle.cache)', 'ms', v.uncached),
    ];
    if (v.bareNode) {
      rows.push(
        row('without NODE_EXTRA_CA_CERTS: node -e 0', 'ms', v.bareNode),
        row('without NODE_EXTRA_CA_CERTS: settle -- /bin/true', 'ms', v.bareSettle),
        row('without NODE_EXTRA_CA_CERTS: node + one spawn', 'ms', v.bareSpawn),
      );
    }
    const cpuNode = cpuRows('node', 'node -e 0');
    const cpuSettle = cpuRows('settle', 'settle -- /bin/true');
    const cpuUnbundled = cpuRows('unbundled', 'settle without the bundle');
    const cpuSpawn = cpuRows('spawn', 'node + one detached spawn');
    const cpuUncached = cpuRows('uncached', 'settle without its code cache');
    rows.push(cpuNode, cpuSettle, cpuSpawn, cpuUnbundled, cpuUncached);
    const ratios = [
      ratio('settle / node -e 0', pairedRatio(v.settle, v.node), {
        limit: 1.3,
        better: 'lower',
        meaning: 'how much slower the CLI starts, runs /bin/true and exits than an empty node',
      }),
      context('settle / timeout', pairedRatio(v.settle, v.timeout), 'cost of a Node tool over the C one it replaces'),
      context(
        'cpu: settle / node -e 0',
        cpuSettle.mean / cpuNode.mean,
        'the same ratio in CPU time (user+sys), which other load on the machine does not inflate',
      ),
      context(
        'floor: node + one spawn / node -e 0',
        pairedRatio(v.spawn, v.node),
        'what any node CLI that spawns one child pays, before settle does anything of its own',
      ),
      ratio('cpu: settle / node + one spawn', cpuSettle.mean / cpuSpawn.mean, {
        limit: 1.05,
        better: 'lower',
        meaning: 'what settle itself costs in CPU over that floor (issue: ≤ 1.05×)',
      }),
      context(
        'cpu: settle without its code cache / node + one spawn',
        cpuUncached.mean / cpuSpawn.mean,
        'the same without dist/settle.cache: what the code cache buys',
      ),
      context('unbundled / node -e 0', pairedRatio(v.unbundled, v.node), 'the same bin without dist/settle.cjs: what the bundle saves'),
      ...(v.bareNode
        ? [
            context(
              'no CA file: settle / node -e 0',
              pairedRatio(v.bareSettle, v.bareNode),
              'the same ratio with NODE_EXTRA_CA_CERTS unset (set on this machine): a smaller denominator',
            ),
            context(
              'no CA file: floor node + one spawn / node -e 0',
              pairedRatio(v.bareSpawn, v.bareNode),
              'the spawn floor with NODE_EXTRA_CA_CERTS unset',
            ),
          ]
        : []),
    ];
    const base = rows[0].median;
    const loadMs = rows[3].median - base;
    const spawnMs = rows[4].median - base;
    const notes = [
      `settle adds ${(rows[1].median - base).toFixed(1)} ms over node -e 0: loading the bundle ≈ ${loadMs.toFixed(1)} ms, one spawn from node ≈ ${spawnMs.toFixed(1)} ms, the rest (ownership scan of /proc, stdout, pipes, exit) ≈ ${(rows[1].median - base - loadMs - spawnMs).toFixed(1)} ms`,
    ];
    return { name, title, rows, ratios, notes };
  } finally {
    dir.cleanup();
  }
}
