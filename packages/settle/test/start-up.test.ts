import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir, withTimeout } from '@runplan/test-fixtures';
import { settleBin } from './support.js';

// dist/test/start-up.test.js → packages/settle
const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const bundle = join(packageDir, 'dist', 'settle.cjs');

test(
  'the bin runs the one-file CommonJS bundle the build emits (never the ES modules next to it)',
  withTimeout(20_000, async () => {
    assert.ok(existsSync(bundle), 'the build wrote dist/settle.cjs');
    const dir = tempDir();
    try {
      // A preload that records which files the CommonJS loader read and whether the ESM loader ran.
      const seen = join(dir.path, 'seen.json');
      const preload = join(dir.path, 'seen.cjs');
      writeFileSync(
        preload,
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify({` +
          ` cjs: Object.keys(require.cache), esm: process.moduleLoadList.includes('NativeModule internal/modules/esm/load') })));`,
      );
      const r = await runBin(process.execPath, ['--require', preload, settleBin, '--', 'sh', '-c', 'echo out; exit 3']);
      assert.is(r.exitCode, 3);
      assert.is(r.stdout, 'out\n');
      const { cjs, esm } = JSON.parse(readFileSync(seen, 'utf8')) as { cjs: string[]; esm: boolean };
      assert.ok(cjs.includes(bundle), `loaded ${cjs.join(', ')}`);
      assert.is(esm, false, 'the ESM loader never started');
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

test.run();
