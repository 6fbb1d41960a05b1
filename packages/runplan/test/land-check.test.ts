// `land` is checked before any work: a land branch checked out with uncommitted changes or
// already moved away from the integration line is refused before the first dispatch (exit 3,
// nothing written); a land_moved after dispatch says how to proceed without redoing the work.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, tempDir, waitUntil } from '@runplan/test-fixtures';
import { records, runIds, runplan, withPlan } from './support.js';

function landOn(plan: string, branch: string): void {
  writeFileSync(plan, readFileSync(plan, 'utf8').replace('base = "main"', `base = "main"\nland = "${branch}"`));
}

test(
  'land_checked_out before any work: the land branch is checked out with uncommitted changes (exit 3, nothing dispatched or written)',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    landOn(f.plan, 'main');
    writeFileSync(join(f.repo.path, 'README.md'), 'edited, not committed\n');
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /^runplan: land_checked_out: refs\/heads\/main is checked out in .* with uncommitted changes/m);
    assert.match(r.stderr, /hint: commit or stash them/);
    assert.is(readLedger(f.ledger).length, 0);
    assert.equal(runIds(f.repo, 'single'), []);
  }),
);

test(
  'land_moved before any work: the land branch is not on the integration line (exit 3, nothing dispatched or written)',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    const side = f.repo.git(['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'side']);
    f.repo.git(['branch', 'release', side]);
    landOn(f.plan, 'release');
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /^runplan: land_moved: refs\/heads\/release is at [0-9a-f]{12}, which the integration line/m);
    assert.is(readLedger(f.ledger).length, 0);
    assert.equal(runIds(f.repo, 'single'), []);
  }),
);

test(
  'a land branch that does not exist (a typo, land = "mian") is said before any work, in --dry-run too; landing creates it',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    landOn(f.plan, 'mian');
    const said =
      /^runplan: land_new_branch: refs\/heads\/mian does not exist: landing creates it \(check land in .*plan.* if you meant an existing branch\)$/m;
    const dry = await runplan(['run', f.plan, '--dry-run'], f);
    assert.is(dry.exitCode, 0, dry.stderr);
    assert.match(dry.stdout + dry.stderr, /land_new_branch: refs\/heads\/mian does not exist/);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stderr, said);
    assert.ok(f.repo.git(['rev-parse', '--verify', 'refs/heads/mian']).length > 0, 'landing created the branch');
    // Once it exists, nothing is said.
    f.repo.git(['branch', '-f', 'main2', 'main']);
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace('land = "mian"', 'land = "main2"'));
    const again = await runplan(['run', f.plan, '--new-run'], f);
    assert.is(again.exitCode, 0, again.stderr);
    assert.not.match(again.stderr, /land_new_branch/);
  }),
);

test(
  'land_moved after dispatch stays class integration; the message names the kept result ref and the command',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const hold = tempDir('runplan-hold-');
    try {
      const holdFile = join(hold.path, 'hold');
      writeFileSync(holdFile, '');
      f.repo.git(['branch', 'release', 'main']);
      landOn(f.plan, 'release');
      const running = runplan(['run', f.plan], { env: { ...f.env, MOCK_HOLD: 'only', MOCK_HOLD_FILE: holdFile } });
      await waitUntil('the task is dispatched', () => readLedger(f.ledger).length === 1, { timeoutMs: 60_000 });
      const side = f.repo.git(['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'someone else']);
      f.repo.git(['update-ref', 'refs/heads/release', side]);
      rmSync(holdFile);
      const r = await running;
      assert.is(r.exitCode, 1, r.stderr);
      const terminal = (await records(f.repo, 'single')).filter((x) => x.terminal === true)[0]!;
      const d = terminal.data as Record<string, any>;
      assert.equal([d.class, d.reason], ['integration', 'land_moved']);
      const kept = `refs/runplan/single/runs/${d.logicalRunId}`;
      assert.is(f.repo.git(['rev-parse', kept]), f.repo.head('runplan/single'));
      assert.ok(String(d.message).includes(kept), d.message);
      assert.ok(String(d.message).includes(`runplan run ${f.plan}`), d.message);

      // Once release is back on the line, the next run continues, lands, and its result
      // supersedes the one the failed run kept: that ref is deleted, its own stays.
      f.repo.git(['update-ref', 'refs/heads/release', 'main']);
      const again = await runplan(['run', f.plan], f);
      assert.is(again.exitCode, 0, again.stderr);
      const [, next] = runIds(f.repo, 'single');
      assert.is(f.repo.git(['for-each-ref', '--format=%(refname)', 'refs/runplan/single/runs/']), `refs/runplan/single/runs/${next}`);
      assert.is(f.repo.head('release'), f.repo.head('runplan/single'));
    } finally {
      hold.cleanup();
    }
  }),
);

test.run();
