// How the bin starts: the CLI as one CommonJS file (dist/lib/cli.cjs) with the V8 code cache
// the build made of it, the ES modules only when that file is absent, and a cache from
// another build never handed to V8. README, "Start-up".
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { otherBuildOf, runBin, runRecordingLoad, tempDir, withTimeout, wrappedModule } from '@runplan/test-fixtures';
import { RUNPLAN } from './support.js';

// dist/test/start-up.test.js → packages/runplan
const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const lib = join(packageDir, 'dist', 'lib');
const bundle = join(lib, 'cli.cjs');
const codeCache = join(lib, 'cli.cache');
const version = (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;

// A copy of the installed layout — bin/, package.json, dist/lib's ES modules, and the one-file
// CLI with or without its cache — to tamper with.
function installedCopy(dir: string, files: { cjs: boolean; cache: boolean }): { bin: string; bundle: string; cache: string } {
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'dist', 'lib'), { recursive: true });
  for (const file of ['runplan.js', 'package.json']) copyFileSync(join(packageDir, 'bin', file), join(dir, 'bin', file));
  copyFileSync(join(packageDir, 'package.json'), join(dir, 'package.json'));
  for (const file of readdirSync(lib).filter((f) => f.endsWith('.js'))) copyFileSync(join(lib, file), join(dir, 'dist', 'lib', file));
  if (files.cjs) copyFileSync(bundle, join(dir, 'dist', 'lib', 'cli.cjs'));
  if (files.cache) copyFileSync(codeCache, join(dir, 'dist', 'lib', 'cli.cache'));
  return { bin: join(dir, 'bin', 'runplan.js'), bundle: join(dir, 'dist', 'lib', 'cli.cjs'), cache: join(dir, 'dist', 'lib', 'cli.cache') };
}

test(
  'the bin runs the one-file CommonJS CLI the build emits, with the code cache the build made of it (never the ES modules)',
  withTimeout(30_000, async () => {
    assert.ok(existsSync(bundle), 'the build wrote dist/lib/cli.cjs');
    assert.ok(existsSync(codeCache), 'the build wrote dist/lib/cli.cache');
    const { r, seen } = await runRecordingLoad(RUNPLAN, ['--version']);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(r.stdout, `runplan ${version}\n`);
    assert.equal(seen.scripts, [{ filename: bundle, cached: true, rejected: false }], 'compiled from the cache, accepted by V8');
    assert.is(seen.esm, false, 'the ESM loader never started');
    // A command that reads files beside the bundle (the demo's plan) finds them from there.
    const validate = await runBin(RUNPLAN, ['validate', join(packageDir, 'dist', 'demo', 'plans', 'thirteen.toml')], { timeoutMs: 20_000 });
    assert.is(validate.exitCode, 0, validate.stderr);
  }),
);

test("the plan cache's build id covers the one-file CLI: dist/lib/build-id.js is the sha256 of every .js and .cjs file beside it", () => {
  const hash = createHash('sha256');
  for (const name of readdirSync(lib)
    .filter((n) => (n.endsWith('.js') || n.endsWith('.cjs')) && n !== 'build-id.js')
    .sort())
    hash.update(`${name}\0`).update(readFileSync(join(lib, name)));
  assert.ok(readdirSync(lib).includes('cli.cjs'));
  assert.match(readFileSync(join(lib, 'build-id.js'), 'utf8'), `export const buildId = '${hash.digest('hex')}';`);
});

test(
  'a code cache made for another build of the CLI is never handed to V8, and a foreign one only costs time',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const copy = installedCopy(dir.path, { cjs: true, cache: true });
      // Another build: a different build id and a change of the same length as the old text.
      const text = readFileSync(copy.bundle, 'utf8');
      const rebuilt = otherBuildOf(text, '`runplan $' + '{packageVersion', '`RUNPLAN $' + '{packageVersion');
      assert.is(rebuilt.length, text.length);
      assert.not.equal(rebuilt, text);
      writeFileSync(copy.bundle, rebuilt);
      const { r, seen } = await runRecordingLoad(copy.bin, ['--version']);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(r.stdout, `RUNPLAN ${version}\n`, 'the new build ran');
      assert.is(seen.scripts.filter((s) => s.cached).length, 0, `scripts: ${JSON.stringify(seen.scripts)}`);

      // Made under other V8 flags (as by another Node): rejected by V8's flag hash, same output.
      const foreign = await runRecordingLoad(RUNPLAN, ['--version'], ['--stack-size=900']);
      assert.is(foreign.r.stdout, `runplan ${version}\n`);
      assert.equal(foreign.seen.scripts, [{ filename: bundle, cached: true, rejected: true }]);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a code cache with bytes flipped inside (its length and header intact) is never handed to V8: the gate still decides',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const copy = installedCopy(dir.path, { cjs: true, cache: true });
      const bytes = readFileSync(copy.cache);
      const at = bytes.indexOf(10) + 1 + Math.floor((bytes.length - bytes.indexOf(10)) / 2);
      for (let i = at; i < at + 64; i++) bytes[i] = bytes[i]! ^ 0xff;
      writeFileSync(copy.cache, bytes);
      const { r, seen } = await runRecordingLoad(copy.bin, ['--version']);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(r.stdout, `runplan ${version}\n`);
      assert.equal(seen.scripts, [{ filename: copy.bundle, cached: false }], 'compiled without the cache, V8 never saw it');
      const input = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'runplan run plan.toml &' }, cwd: dir.path });
      const gate = await runBin(copy.bin, ['gate', 'claude'], { input, timeoutMs: 20_000 });
      assert.is(gate.exitCode, 2, gate.stderr);
      assert.match(gate.stderr, /^runplan gate: background_launch:/, 'the gate decided (not a load failure)');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'without the one-file CLI the bin imports the ES modules; without its cache it compiles it without one',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'esm'));
      const esm = installedCopy(join(dir.path, 'esm'), { cjs: false, cache: false });
      const viaEsm = await runRecordingLoad(esm.bin, ['--version']);
      assert.is(viaEsm.r.exitCode, 0, viaEsm.r.stderr);
      assert.is(viaEsm.r.stdout, `runplan ${version}\n`);
      assert.is(viaEsm.seen.esm, true);
      const bad = await runBin(esm.bin, ['run', '--jobs', 'many', 'plan.toml'], { timeoutMs: 20_000 });
      assert.is(bad.exitCode, 2, bad.stderr);

      mkdirSync(join(dir.path, 'plain'));
      const plain = installedCopy(join(dir.path, 'plain'), { cjs: true, cache: false });
      const uncached = await runRecordingLoad(plain.bin, ['--version']);
      assert.is(uncached.r.exitCode, 0, uncached.r.stderr);
      assert.is(uncached.r.stdout, `runplan ${version}\n`);
      assert.equal(uncached.seen.scripts, [{ filename: plain.bundle, cached: false }]);
      assert.is(uncached.seen.esm, false);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a one-file CLI that fails to load still denies as a hook (exit 2) and names the failure',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const copy = installedCopy(dir.path, { cjs: true, cache: true });
      // Half of it written (a copy cut short): V8 rejects the cache (another length) and the compile fails.
      const text = readFileSync(copy.bundle, 'utf8');
      writeFileSync(copy.bundle, text.slice(0, text.length >> 1));
      const input = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'ls' }, cwd: dir.path });
      const gate = await runBin(copy.bin, ['gate', 'claude'], { input, timeoutMs: 20_000 });
      assert.is(gate.exitCode, 2, gate.stderr);
      // V8's words for where the text stops (end of input, an unterminated literal) depend on the cut.
      assert.match(gate.stderr, /^runplan: cannot load the built CLI \([^\n]+\)\n {2}hint: npm run build\n/);
      const status = await runBin(copy.bin, ['status'], { timeoutMs: 20_000 });
      assert.is(status.exitCode, 1);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a CLI with no main(), one that throws, or one that never returns an exit code: the gate denies (2), other commands fail (1)',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'bin'));
      mkdirSync(join(dir.path, 'dist', 'lib'), { recursive: true });
      for (const file of ['runplan.js', 'package.json']) copyFileSync(join(packageDir, 'bin', file), join(dir.path, 'bin', file));
      const bin = join(dir.path, 'bin', 'runplan.js');
      const cases: Array<[string, string, RegExp]> = [
        [
          'a bundle not wrapped in its module function (an older build)',
          '"use strict";\nexports.main = async () => 0;',
          /^runplan: cannot load the built CLI \(.*cli\.cjs is not a wrapped bundle \(scripts\/stamp\.js\)\)/,
        ],
        ['no main()', wrappedModule(''), /^runplan: cannot load the built CLI \(it has no main\(\)\)/],
        [
          'main() rejects',
          wrappedModule("exports.main = async () => { throw new Error('boom'); };"),
          /^runplan: internal error: Error: boom/,
        ],
        [
          'main() never settles',
          wrappedModule('exports.main = () => new Promise(() => {});'),
          /^runplan: internal error: the command ended without an exit code/,
        ],
        [
          'an error thrown after the answer',
          wrappedModule("exports.main = async () => { setTimeout(() => { throw new Error('late'); }, 10); return 0; };"),
          /Error: late/,
        ],
      ];
      for (const [what, body, said] of cases) {
        writeFileSync(join(dir.path, 'dist', 'lib', 'cli.cjs'), `${body}\n`);
        const gate = await runBin(bin, ['gate', 'claude'], { input: '{}', timeoutMs: 20_000 });
        assert.is(gate.exitCode, 2, `${what}: gate ${gate.stderr}`);
        assert.match(gate.stderr, said, what);
        const status = await runBin(bin, ['status'], { timeoutMs: 20_000 });
        assert.is(status.exitCode, 1, `${what}: status ${status.stderr}`);
      }
      // The exit code the CLI returns is the bin's, for the gate too.
      writeFileSync(join(dir.path, 'dist', 'lib', 'cli.cjs'), wrappedModule('exports.main = async () => 7;'));
      assert.is((await runBin(bin, ['gate', 'claude'], { input: '{}', timeoutMs: 20_000 })).exitCode, 7);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  "the build's code-cache step refuses a bundle that calls import() (vm.Script has no loader for it) or holds a character past ASCII, and wraps, stamps and caches one that does neither",
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const script = join(packageDir, '..', '..', 'scripts', 'code-cache.js');
      const dynamic = join(dir.path, 'dynamic.cjs');
      writeFileSync(dynamic, "exports.main = async () => (await import('node:os')).EOL.length - 1;\n");
      const refused = await runBin(process.execPath, [script, dynamic, '--checksum'], { timeoutMs: 20_000 });
      assert.is(refused.exitCode, 1, refused.stderr);
      assert.match(refused.stderr, /dynamic\.cjs calls import\(\) \(at offset \d+\)/);
      assert.not.ok(existsSync(join(dir.path, 'dynamic.cache')), 'no cache written');

      // One character past ASCII, if only in a comment, and V8 would hold the whole text as two bytes a character.
      const wide = join(dir.path, 'wide.cjs');
      writeFileSync(wide, 'exports.main = async () => 0; // 0 \u2014 nothing to do\n');
      const refusedWide = await runBin(process.execPath, [script, wide, '--checksum'], { timeoutMs: 20_000 });
      assert.is(refusedWide.exitCode, 1, refusedWide.stderr);
      assert.match(refusedWide.stderr, /wide\.cjs holds a character past ASCII \(U\+2014 at line 2, column \d+\)/);
      assert.not.ok(existsSync(join(dir.path, 'wide.cache')), 'no cache written');

      const plain = join(dir.path, 'plain.cjs');
      writeFileSync(plain, 'exports.main = async () => 0;\n');
      const made = await runBin(process.execPath, [script, plain, '--checksum'], { timeoutMs: 20_000 });
      assert.is(made.exitCode, 0, made.stderr);
      const stamped = readFileSync(plain, 'utf8');
      const id = /^\/\/ build:([0-9a-f]{16})\n/.exec(stamped)?.[1];
      assert.ok(id, 'stamped with its build id');
      assert.is(stamped, `// build:${id}\n${wrappedModule('exports.main = async () => 0;')}`, 'wrapped in its module function');
      assert.match(readFileSync(join(dir.path, 'plain.cache'), 'latin1'), new RegExp(`^plain-code-cache ${id} [0-9a-f]{8}\n`));
      // Stamping again (a second build step over the same file) changes nothing.
      assert.is((await runBin(process.execPath, [script, plain, '--checksum'], { timeoutMs: 20_000 })).exitCode, 0);
      assert.is(readFileSync(plain, 'utf8'), stamped);
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
