import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, expectVersionFrom, packageVersionOf, runBin, withTimeout } from '@runplan/test-fixtures';

test(
  'runplan prints its version for --version alone and wherever it is among its own arguments; --help outranks it; after -- it is not an option',
  withTimeout(30_000, async () => {
    const version = packageVersionOf(import.meta.url);
    await expectVersionFrom('runplan', version, [
      ['--version'],
      ['status', '--version'],
      ['--json', '--version'],
      ['run', 'no-such.toml', '--jobs', '2', '--version'],
      ['stop', 'x', '--bogus', '--version'],
    ]);
    const help = await runBin(binPath('runplan'), ['status', '--help', '--version']);
    assert.is(help.exitCode, 0, help.stderr);
    assert.match(help.stdout, '--state-dir');
    const after = await runBin(binPath('runplan'), ['validate', '--', '--version']);
    assert.is(after.exitCode, 2, after.stderr);
    assert.is(after.stdout, '');
  }),
);

test.run();
