import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { binPath, runBin, tempDir, withTimeout } from '@runplan/test-fixtures';

// cac (mri) turns numeric-looking option values into numbers; runplan must read them as typed.
test(
  'option values are taken as typed: --state-dir 0042 names the directory 0042, not 42',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, '0042'));
      const typed = await runBin(binPath('runplan'), ['status', '--state-dir', '0042'], { cwd: dir.path });
      assert.is(typed.exitCode, 0, typed.stderr);
      const missing = await runBin(binPath('runplan'), ['status', 'nothing', '--state-dir', '0042'], { cwd: dir.path });
      assert.is(missing.exitCode, 1, missing.stderr);
      assert.match(missing.stderr, join(dir.path, '0042'));
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
