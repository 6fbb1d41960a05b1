// The empty cgroups a killed settle leaves behind are removed by the next settle that spawns
// in the same parent — only those: a live maker's, a fresh one, a populated one (with the empty
// cgroups inside it) and anything not named like settle's stay. Through the real bin, in a
// private parent cgroup.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, withTimeout } from '@runplan/test-fixtures';
import { creatorPid } from '../src/cgroup-sweep.js';
import { removeCgroup } from '../src/cgroup.js';
import { ownCgroupDir } from '../src/index.js';
import { killQuietly, settleBin } from './support.js';

const own = ownCgroupDir();

test('creatorPid reads the maker pid from the tag, with or without an ownerTag', () => {
  assert.is(creatorPid(`settle-${(4242).toString(36)}_1x_1_ab`), 4242);
  assert.is(creatorPid(`settle-run_20261201_q1-${(77).toString(36)}_1x_1_ab`), 77);
  assert.is(creatorPid('settle-'), undefined);
  assert.is(creatorPid('settle-x-NOTBASE36_1'), undefined);
  // A tag always has `_` after the pid: a name without one is not a settle cgroup's.
  assert.is(creatorPid('settle-cache'), undefined);
});

test(
  'settle removes stale settle cgroups in its parent: dead maker, made over a minute ago, empty',
  withTimeout(30_000, async () => {
    assert.ok(own.ok, 'this machine can make cgroups');
    const parent = join(own.ok ? own.value : '', `sweep-test-${process.pid}`);
    mkdirSync(parent);
    // A pid above pid_max belongs to no process, now or later.
    const dead = (Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) + 1).toString(36);
    const names = {
      stale: `settle-${dead}_1_1_a`,
      staleOwned: `settle-runX_q1-${dead}_2_1_b`,
      staleNested: `settle-${dead}_3_1_c`,
      fresh: `settle-${dead}_4_1_d`,
      liveMaker: `settle-${process.pid.toString(36)}_5_1_e`,
      populated: `settle-${dead}_6_1_f`,
      notOurs: `other-${dead}_7_1_g`,
    };
    const old = new Date(Date.now() - 2 * 3600_000);
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      for (const name of Object.values(names)) mkdirSync(join(parent, name));
      mkdirSync(join(parent, names.staleNested, `settle-${dead}_8_1_h`));
      // An empty cgroup inside a populated one is part of a live tree (a nested settle's, about to be joined).
      const liveSub = join(parent, names.populated, `settle-${dead}_9_1_i`);
      mkdirSync(liveSub);
      writeFileSync(join(parent, names.populated, 'cgroup.procs'), String(sleeper.pid));
      for (const [key, name] of Object.entries(names)) if (key !== 'fresh') utimesSync(join(parent, name), old, old);

      const r = await runBin(settleBin, ['--ownership', 'cgroup', '--cgroup-parent', parent, '--', '/bin/true'], { timeoutMs: 20_000 });
      assert.is(r.exitCode, 0, r.stderr);
      const left = readdirSync(parent).filter((n) => n.startsWith('settle-') || n.startsWith('other-'));
      assert.equal(left.sort(), [names.fresh, names.liveMaker, names.populated, names.notOurs].sort());
      assert.ok(existsSync(join(parent, names.populated, 'cgroup.procs')), 'the populated one is untouched');
      assert.ok(existsSync(liveSub), 'so is the empty cgroup inside it');
    } finally {
      killQuietly(sleeper.pid);
      await new Promise((done) => (sleeper.exitCode !== null ? done(undefined) : sleeper.once('exit', done)));
      for (const name of readdirSync(parent)) if (/^(settle|other)-/.test(name)) removeCgroup(join(parent, name));
      removeCgroup(parent);
    }
  }),
);

test.run();
