import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, runBin, withTimeout } from '@runplan/test-fixtures';

// dist/test/version.test.js → packages/workdir
const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

test(
  'workdir --version prints the version in package.json and exits 0',
  withTimeout(20_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    const r = await runBin(binPath('workdir'), ['--version']);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(r.stdout, `workdir ${version}\n`);
    assert.is(r.stderr, '');
  }),
);

test(
  'workdir asks for the version wherever --version is among its own arguments; --help outranks it; after -- it is not an option',
  withTimeout(30_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    for (const args of [
      ['render', '--version'],
      ['render', 'x', '--var', 'run.id=r1', '--version'],
      ['--json', '--version'],
      ['prune', 'x', '--bogus', '--version'],
    ]) {
      const r = await runBin(binPath('workdir'), args);
      assert.is(r.exitCode, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.is(r.stdout, `workdir ${version}\n`, args.join(' '));
      assert.is(r.stderr, '', args.join(' '));
    }
    const help = await runBin(binPath('workdir'), ['prune', '--help', '--version']);
    assert.is(help.exitCode, 0, help.stderr);
    assert.match(help.stdout, '--retain');
    // After --, `--version` is not an option: render is left without its template (usage, exit 2).
    const rendered = await runBin(binPath('workdir'), ['render', '--', '--version']);
    assert.is(rendered.exitCode, 2, rendered.stderr);
    assert.is(rendered.stdout, '');
  }),
);

test.run();
