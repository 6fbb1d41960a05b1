// How the bin starts: the CLI as one CommonJS file (dist/lib/cli.cjs) with the V8 code cache
// the build made of it, the ES modules only when that file is absent, and a cache from
// another build never handed to V8. README, "Start-up".
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { otherBuildOf, runBin, runRecordingLoad, tempDir, withTimeout } from '@runplan/test-fixtures';
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
      assert.equal(seen.scripts, [], 'required plainly, V8 never saw the cache');
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
  'without the one-file CLI the bin imports the ES modules; without its cache it requires it plainly',
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
      const viaRequire = await runRecordingLoad(plain.bin, ['--version']);
      assert.is(viaRequire.r.exitCode, 0, viaRequire.r.stderr);
      assert.is(viaRequire.r.stdout, `runplan ${version}\n`);
      assert.equal(viaRequire.seen.scripts, []);
      assert.ok(viaRequire.seen.cjs.includes(plain.bundle), 'required as a plain CommonJS file');
      assert.is(viaRequire.seen.esm, false);
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
      writeFileSync(copy.bundle, `${readFileSync(copy.bundle, 'utf8').split('\n')[0]}\nthrow new Error('half-written bundle');\n`);
      const input = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'ls' }, cwd: dir.path });
      const gate = await runBin(copy.bin, ['gate', 'claude'], { input, timeoutMs: 20_000 });
      assert.is(gate.exitCode, 2, gate.stderr);
      assert.match(gate.stderr, /^runplan: cannot load the built CLI \(half-written bundle\)/);
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
        ['no main()', '', /^runplan: cannot load the built CLI \(it has no main\(\)\)/],
        ['main() rejects', "exports.main = async () => { throw new Error('boom'); };", /^runplan: internal error: Error: boom/],
        [
          'main() never settles',
          'exports.main = () => new Promise(() => {});',
          /^runplan: internal error: the command ended without an exit code/,
        ],
        [
          'an error thrown after the answer',
          "exports.main = async () => { setTimeout(() => { throw new Error('late'); }, 10); return 0; };",
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
      writeFileSync(join(dir.path, 'dist', 'lib', 'cli.cjs'), 'exports.main = async () => 7;\n');
      assert.is((await runBin(bin, ['gate', 'claude'], { input: '{}', timeoutMs: 20_000 })).exitCode, 7);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  "the build's code-cache step refuses a bundle that calls import() (vm.Script has no loader for it), and caches one that does not",
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

      const plain = join(dir.path, 'plain.cjs');
      writeFileSync(plain, 'exports.main = async () => 0;\n');
      const made = await runBin(process.execPath, [script, plain, '--checksum'], { timeoutMs: 20_000 });
      assert.is(made.exitCode, 0, made.stderr);
      const id = /^\/\/ build:([0-9a-f]{16})\n/.exec(readFileSync(plain, 'utf8'))?.[1];
      assert.ok(id, 'stamped with its build id');
      assert.match(readFileSync(join(dir.path, 'plain.cache'), 'latin1'), new RegExp(`^plain-code-cache ${id} [0-9a-f]{8}\n`));
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
