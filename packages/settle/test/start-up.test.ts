import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { otherBuildOf, runBin, runRecordingLoad, tempDir, withTimeout, wrappedModule } from '@runplan/test-fixtures';
import { settleBin } from './support.js';

// dist/test/start-up.test.js → packages/settle
const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const bundle = join(packageDir, 'dist', 'settle.cjs');

const codeCache = join(packageDir, 'dist', 'settle.cache');

// A copy of the installed layout (bin/ and the bundle, with or without a cache) to tamper with.
function installedCopy(dir: string, withCache: boolean): { bin: string; bundle: string; cache: string } {
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'dist'));
  for (const file of ['settle.js', 'package.json']) copyFileSync(join(packageDir, 'bin', file), join(dir, 'bin', file));
  copyFileSync(bundle, join(dir, 'dist', 'settle.cjs'));
  if (withCache) copyFileSync(codeCache, join(dir, 'dist', 'settle.cache'));
  return { bin: join(dir, 'bin', 'settle.js'), bundle: join(dir, 'dist', 'settle.cjs'), cache: join(dir, 'dist', 'settle.cache') };
}

test(
  'the bin runs the one-file CommonJS bundle the build emits, with the V8 code cache the build made of it (never the ES modules)',
  withTimeout(20_000, async () => {
    assert.ok(existsSync(bundle), 'the build wrote dist/settle.cjs');
    assert.ok(existsSync(codeCache), 'the build wrote dist/settle.cache');
    const { r, seen } = await runRecordingLoad(settleBin, ['--', 'sh', '-c', 'echo out; exit 3']);
    assert.is(r.exitCode, 3);
    assert.is(r.stdout, 'out\n');
    assert.equal(seen.scripts, [{ filename: bundle, cached: true, rejected: false }], 'the bundle compiled from the cache, accepted by V8');
    assert.is(seen.cjs.filter((file) => file.includes('/dist/src/')).length, 0, `loaded ${seen.cjs.join(', ')}`);
    assert.is(seen.esm, false, 'the ESM loader never started');
  }),
);

test(
  'a code cache made for another build of the bundle is never handed to V8 (V8 itself compares only the length)',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      const copy = installedCopy(dir.path, true);
      // Another build: a different build id and a change of the same length as the old text.
      const text = readFileSync(copy.bundle, 'utf8');
      const rebuilt = otherBuildOf(text, '`settle $' + '{settleVersion}', '`SETTLE $' + '{settleVersion}');
      assert.is(rebuilt.length, text.length);
      assert.not.equal(rebuilt, text);
      writeFileSync(copy.bundle, rebuilt);
      const { r, seen } = await runRecordingLoad(copy.bin, ['--version']);
      assert.is(r.exitCode, 0);
      assert.match(r.stdout, /^SETTLE /, 'the new build ran');
      assert.is(seen.scripts.filter((s) => s.cached).length, 0, `scripts: ${JSON.stringify(seen.scripts)}`);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a truncated, foreign or missing code cache only costs time: V8 rejects it and the bin behaves the same',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      const truncated = installedCopy(dir.path, true);
      const bytes = readFileSync(truncated.cache);
      writeFileSync(truncated.cache, bytes.subarray(0, bytes.length - 1000));
      const { r, seen } = await runRecordingLoad(truncated.bin, ['--', 'sh', '-c', 'echo out; echo err >&2; exit 7']);
      assert.is(r.exitCode, 7);
      assert.is(r.stdout, 'out\n');
      assert.is(r.stderr, 'err\n');
      assert.equal(seen.scripts, [{ filename: truncated.bundle, cached: true, rejected: true }]);

      // Made under other V8 flags (as by another Node): rejected by V8's flag hash.
      const foreign = await runRecordingLoad(settleBin, ['--', 'sh', '-c', 'exit 4'], ['--stack-size=900']);
      assert.is(foreign.r.exitCode, 4);
      assert.equal(foreign.seen.scripts, [{ filename: bundle, cached: true, rejected: true }]);

      mkdirSync(join(dir.path, 'none'));
      const none = installedCopy(join(dir.path, 'none'), false);
      const plain = await runRecordingLoad(none.bin, ['--', 'sh', '-c', 'exit 5']);
      assert.is(plain.r.exitCode, 5);
      assert.equal(plain.seen.scripts, [{ filename: none.bundle, cached: false }], 'compiled without a cache');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'without the bundle (only tsc ran) the bin falls back to dist/src and behaves the same',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      // The shim as installed, next to a dist/ that holds dist/src but no settle.cjs.
      mkdirSync(join(dir.path, 'bin'));
      mkdirSync(join(dir.path, 'dist'));
      for (const file of ['settle.js', 'package.json']) copyFileSync(join(packageDir, 'bin', file), join(dir.path, 'bin', file));
      symlinkSync(join(packageDir, 'dist', 'src'), join(dir.path, 'dist', 'src'));
      const shim = join(dir.path, 'bin', 'settle.js');
      const r = await runBin(shim, ['--', 'sh', '-c', 'echo out; echo err >&2; exit 7']);
      assert.is(r.exitCode, 7);
      assert.is(r.stdout, 'out\n');
      assert.is(r.stderr, 'err\n');
      const usage = await runBin(shim, ['--deadline', 'soon', '--', 'true']);
      assert.is(usage.exitCode, 125);
      assert.match(usage.stderr, /^settle: usage: --deadline soon is not a duration/);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  "a CLI that cannot load, rejects, or never returns an exit code is settle's own failure (125), never 0",
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'bin'));
      mkdirSync(join(dir.path, 'dist'));
      for (const file of ['settle.js', 'package.json']) copyFileSync(join(packageDir, 'bin', file), join(dir.path, 'bin', file));
      const shim = join(dir.path, 'bin', 'settle.js');
      const cases: Array<[string, string, RegExp]> = [
        ['a syntax error', wrappedModule('exports.main = (;'), /^settle: internal error: .*settle\.cjs:1/],
        [
          'a bundle not wrapped in its module function (an older build)',
          '"use strict";\nexports.main = async () => 0;',
          /^settle: internal error: Error: .*settle\.cjs is not a wrapped bundle \(scripts\/stamp\.js\)/,
        ],
        ['no main()', wrappedModule(''), /^settle: internal error: TypeError: main is not a function/],
        [
          'main() rejects',
          wrappedModule("exports.main = async () => { throw new Error('boom'); };"),
          /^settle: internal error: Error: boom/,
        ],
        [
          'main() never settles',
          wrappedModule('exports.main = () => new Promise(() => {});'),
          /^settle: internal error: the command ended without an exit code/,
        ],
      ];
      for (const [what, body, said] of cases) {
        writeFileSync(join(dir.path, 'dist', 'settle.cjs'), `${body}\n`);
        const r = await runBin(shim, ['--', 'true']);
        assert.is(r.exitCode, 125, `${what}: ${r.stderr}`);
        assert.match(r.stderr, said, what);
      }
      writeFileSync(join(dir.path, 'dist', 'settle.cjs'), wrappedModule('exports.main = async () => 7;'));
      assert.is((await runBin(shim, ['--', 'true'])).exitCode, 7, 'the code the CLI returns is the exit code');
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
