#!/usr/bin/env node
// PROTOTYPE, not wired into the build: bundles the settle CLI (bin shim + dist + cac +
// write-file-atomic) into one ES module with esbuild, to measure what a build-time bundle
// would do for cold start (bench/settle-cli-start.js picks the bundle up when it exists).
//
//   node bench/bundle-settle.js [--esbuild DIR] [--minify]
//
// esbuild is not a dependency of the repo. Install it into a scratch directory first:
//   mkdir -p /tmp/esbuild-scratch && cd /tmp/esbuild-scratch && npm init -y && npm i esbuild
// DIR defaults to $ESBUILD_DIR or /tmp/esbuild-scratch. Output: bundlePath().
import { mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './lib.js';

/** Where the prototype bundle is written (outside the repo: it is a build artefact). */
export function bundlePath() {
  return join(tmpdir(), 'runplan-bench', 'settle.bundle.mjs');
}

// Bundles bin/settle.js into bundlePath(); returns its size in bytes.
export async function buildBundle({ esbuildDir, minify = false }) {
  const require = createRequire(join(esbuildDir, 'package.json'));
  const esbuild = await import(pathToFileURL(require.resolve('esbuild')).href);
  const outfile = bundlePath();
  mkdirSync(join(tmpdir(), 'runplan-bench'), { recursive: true });
  await esbuild.build({
    entryPoints: [join(root, 'packages/settle/bin/settle.js')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify,
    // CommonJS dependencies (write-file-atomic) call require() for node builtins.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'warning',
  });
  return statSync(outfile).size;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--esbuild');
  const esbuildDir = at >= 0 ? args[at + 1] : (process.env.ESBUILD_DIR ?? '/tmp/esbuild-scratch');
  try {
    const size = await buildBundle({ esbuildDir, minify: args.includes('--minify') });
    console.log(`${bundlePath()} (${(size / 1024).toFixed(0)} KiB)`);
  } catch (e) {
    process.stderr.write(`bundle-settle: esbuild_failed: ${e instanceof Error ? e.message.split('\n')[0] : e}\n  hint: install esbuild into ${esbuildDir} (see the top of bench/bundle-settle.js)\n`);
    process.exitCode = 1;
  }
}
