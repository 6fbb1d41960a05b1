import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, runBin, withTimeout } from '@runplan/test-fixtures';

// dist/test/version.test.js → packages/journal
const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

test(
  'journal --version prints the version in package.json and exits 0',
  withTimeout(20_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    const r = await runBin(binPath('journal'), ['--version']);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(r.stdout, `journal ${version}\n`);
    assert.is(r.stderr, '');
  }),
);

test(
  'journal asks for the version wherever --version is among its own arguments; --help outranks it; after -- it is not an option',
  withTimeout(30_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    for (const args of [
      ['cat', '--version'],
      ['cat', 'no-such.jsonl', '--version'],
      ['validate', 'x', '--json', '--version'],
      ['append', 'x', '--bogus', '--version'],
    ]) {
      const r = await runBin(binPath('journal'), args);
      assert.is(r.exitCode, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.is(r.stdout, `journal ${version}\n`, args.join(' '));
      assert.is(r.stderr, '', args.join(' '));
    }
    const help = await runBin(binPath('journal'), ['cat', '--help', '--version']);
    assert.is(help.exitCode, 0, help.stderr);
    assert.match(help.stdout, '--since');
    const after = await runBin(binPath('journal'), ['cat', '--', '--version']);
    assert.is(after.exitCode, 2, after.stderr);
    assert.is(after.stdout, '');
  }),
);

test.run();
