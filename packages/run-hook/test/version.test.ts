import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, runBin, shFixture, withTimeout } from '@runplan/test-fixtures';

// dist/test/version.test.js → packages/run-hook
const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

test(
  'run-hook --version prints the version in package.json and exits 0',
  withTimeout(20_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    const r = await runBin(binPath('run-hook'), ['--version']);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(r.stdout, `run-hook ${version}\n`);
    assert.is(r.stderr, '');
  }),
);

test(
  "run-hook asks for the version wherever --version is among its own options; --help outranks it; after -- it is the hook's argument",
  withTimeout(30_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    for (const args of [
      ['--json', '--version'],
      ['--tier', 'post_run', '--version', '--', 'false'],
      ['--bogus', '--version'],
    ]) {
      const r = await runBin(binPath('run-hook'), args);
      assert.is(r.exitCode, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.is(r.stdout, `run-hook ${version}\n`, args.join(' '));
      assert.is(r.stderr, '', args.join(' '));
    }
    const help = await runBin(binPath('run-hook'), ['--help', '--version']);
    assert.is(help.exitCode, 0, help.stderr);
    assert.match(help.stdout, 'Exit codes');
    // After --, --version belongs to the hook: it runs and receives it.
    const hook = await runBin(binPath('run-hook'), ['--', shFixture('hook-args.sh'), '--version']);
    assert.is(hook.exitCode, 0, hook.stderr);
    assert.is(hook.stdout, '1\0--version\0');
  }),
);

test.run();
