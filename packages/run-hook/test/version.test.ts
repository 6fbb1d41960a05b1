import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, expectVersionFrom, packageVersionOf, runBin, shFixture, withTimeout } from '@runplan/test-fixtures';

test(
  "run-hook prints its version for --version alone and wherever it is among its own options; --help outranks it; after -- it is the hook's argument",
  withTimeout(30_000, async () => {
    const version = packageVersionOf(import.meta.url);
    await expectVersionFrom('run-hook', version, [
      ['--version'],
      ['--json', '--version'],
      ['--tier', 'post_run', '--version', '--', 'false'],
      ['--bogus', '--version'],
    ]);
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
