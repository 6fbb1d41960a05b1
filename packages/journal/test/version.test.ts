import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, expectVersionFrom, packageVersionOf, runBin, withTimeout } from '@runplan/test-fixtures';

test(
  'journal prints its version for --version alone and wherever it is among its own arguments; --help outranks it; after -- it is not an option',
  withTimeout(30_000, async () => {
    const version = packageVersionOf(import.meta.url);
    await expectVersionFrom('journal', version, [
      ['--version'],
      ['cat', '--version'],
      ['cat', 'no-such.jsonl', '--version'],
      ['validate', 'x', '--json', '--version'],
      ['append', 'x', '--bogus', '--version'],
    ]);
    const help = await runBin(binPath('journal'), ['cat', '--help', '--version']);
    assert.is(help.exitCode, 0, help.stderr);
    assert.match(help.stdout, '--since');
    const after = await runBin(binPath('journal'), ['cat', '--', '--version']);
    assert.is(after.exitCode, 2, after.stderr);
    assert.is(after.stdout, '');
  }),
);

test.run();
