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

test.run();
