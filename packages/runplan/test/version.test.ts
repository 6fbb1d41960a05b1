import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, runBin, withTimeout } from '@runplan/test-fixtures';

// dist/test/version.test.js → packages/runplan
const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

test(
  'runplan --version prints the version in package.json and exits 0',
  withTimeout(20_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    const r = await runBin(binPath('runplan'), ['--version']);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(r.stdout, `runplan ${version}\n`);
    assert.is(r.stderr, '');
  }),
);

test(
  'runplan asks for the version wherever --version is among its own arguments; --help outranks it; after -- it is not an option',
  withTimeout(30_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    for (const args of [
      ['status', '--version'],
      ['--json', '--version'],
      ['run', 'no-such.toml', '--jobs', '2', '--version'],
      ['stop', 'x', '--bogus', '--version'],
    ]) {
      const r = await runBin(binPath('runplan'), args);
      assert.is(r.exitCode, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.is(r.stdout, `runplan ${version}\n`, args.join(' '));
      assert.is(r.stderr, '', args.join(' '));
    }
    const help = await runBin(binPath('runplan'), ['status', '--help', '--version']);
    assert.is(help.exitCode, 0, help.stderr);
    assert.match(help.stdout, '--state-dir');
    const after = await runBin(binPath('runplan'), ['validate', '--', '--version']);
    assert.is(after.exitCode, 2, after.stderr);
    assert.is(after.stdout, '');
  }),
);

test.run();
