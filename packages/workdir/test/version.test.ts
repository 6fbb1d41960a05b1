import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, expectVersionFrom, packageVersionOf, runBin, withTimeout } from '@runplan/test-fixtures';

test(
  'workdir prints its version for --version alone and wherever it is among its own arguments; --help outranks it; after -- it is not an option',
  withTimeout(30_000, async () => {
    const version = packageVersionOf(import.meta.url);
    await expectVersionFrom('workdir', version, [
      ['--version'],
      ['render', '--version'],
      ['render', 'x', '--var', 'run.id=r1', '--version'],
      ['--json', '--version'],
      ['prune', 'x', '--bogus', '--version'],
    ]);
    const help = await runBin(binPath('workdir'), ['prune', '--help', '--version']);
    assert.is(help.exitCode, 0, help.stderr);
    assert.match(help.stdout, '--retain');
    // After --, `--version` is not an option but render's operand: the template `--version`, rendered as it is.
    const rendered = await runBin(binPath('workdir'), ['render', '--', '--version']);
    assert.is(rendered.exitCode, 0, rendered.stderr);
    assert.is(rendered.stdout, '--version\n');
  }),
);

test.run();
