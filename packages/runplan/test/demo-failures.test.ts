// `runplan demo` refuses, through the bin, when it cannot set its example up: the bundled
// example is not in the package (fixtures_missing), or git cannot make the scratch repository
// (git_failed; its half-made directory is removed). Each is exit 3 and one line naming why.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { envWithAgents, fixture, runBin, tempDir, withCleanup } from '@runplan/test-fixtures';
import { gitShim } from './git-shim.js';
import { RUNPLAN, runplan } from './support.js';

test(
  'git cannot make the scratch repository (git init is killed): exit 3, git_failed naming git init, nothing left in TMPDIR',
  withCleanup(
    60_000,
    () => tempDir('runplan-demo-tmp-'),
    async (tmp) => {
      const shim = gitShim(envWithAgents({ TMPDIR: tmp.path }), 'git-kill.sh', () => ({ RUNPLAN_TEST_GIT_KILL: 'init' }));
      try {
        const r = await runplan(['demo'], { env: shim.env });
        assert.is(r.exitCode, 3, r.stderr);
        assert.match(r.stderr, /^runplan: git_failed: .*git init -q -b main/m);
        assert.not.match(r.stderr, /scratch repository/);
        assert.equal(readdirSync(tmp.path), [], 'the half-made scratch dir is gone');
      } finally {
        shim.cleanup();
      }
    },
  ),
);

test(
  'the bundled example is not in the package (a copy of the bin and its bundle without dist/demo): exit 3, fixtures_missing',
  withCleanup(
    60_000,
    () => tempDir('runplan-demo-pkg-'),
    async (dir) => {
      const pkg = fixture('../packages/runplan');
      const copy = join(dir.path, 'runplan');
      mkdirSync(join(copy, 'dist'), { recursive: true });
      cpSync(join(pkg, 'package.json'), join(copy, 'package.json'));
      cpSync(join(pkg, 'bin'), join(copy, 'bin'), { recursive: true });
      cpSync(join(pkg, 'dist', 'lib'), join(copy, 'dist', 'lib'), { recursive: true });
      const bin = join(copy, 'bin', 'runplan.js');
      assert.is.not(bin, RUNPLAN);
      const tmp = join(dir.path, 'tmp');
      mkdirSync(tmp);
      const r = await runBin(bin, ['demo'], { cwd: dir.path, env: envWithAgents({ TMPDIR: tmp }), timeoutMs: 30_000 });
      assert.is(r.exitCode, 3, r.stderr);
      assert.match(
        r.stderr,
        /^runplan: fixtures_missing: the bundled example \(dist\/demo\/plans\/thirteen\.toml, agents\/mock-agent\) is not in this package$/m,
      );
      assert.equal(readdirSync(tmp), [], 'no scratch repository was made');
    },
  ),
);

test.run();
