// status, log, report and stop outside any git work tree: exit 2, not_a_repository, nothing written.
import { readdirSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir, withCleanup } from '@runplan/test-fixtures';
import { RUNPLAN } from './support.js';

test(
  'status, log, report and stop outside a repository exit 2 naming not_a_repository',
  withCleanup(
    60_000,
    () => tempDir('runplan-norepo-'),
    async (dir) => {
      for (const args of [['status'], ['log'], ['report'], ['stop', 'x']]) {
        const r = await runBin(RUNPLAN, args, {
          cwd: dir.path,
          env: { ...process.env, GIT_CEILING_DIRECTORIES: dir.path },
          timeoutMs: 30_000,
        });
        assert.is(r.exitCode, 2, `${args[0]}: ${r.stderr}`);
        assert.match(r.stderr, /^runplan: not_a_repository: .* is not inside a git work tree/, args[0]);
      }
      assert.equal(readdirSync(dir.path), [], 'nothing written');
    },
  ),
);

test.run();
