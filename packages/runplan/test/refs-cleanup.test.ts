// The refs runplan keeps are cleaned when they have served, and a ref git will not write is
// said (real bin): loop rounds serve only a resume of their own run — deleted at the task's
// checkpoint, at the run's receipt, and (other runs') when a run starts; a ref write git
// refuses is journaled as ref-failed, listed in the receipt and warned about on stderr.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gitShim } from './git-shim.js';
import { ofType, records, runIds, runplan, withPlan, loopPlan } from './support.js';

const PLAN = loopPlan('refs');

const ROUNDS = 'refs/runplan/refs/rounds/';

// A `git` first on PATH that logs each call's arguments to `log` and runs the real one.
const shims: Array<{ cleanup(): void }> = [];
test.after(() => {
  for (const shim of shims) shim.cleanup();
});
function loggingGit(env: Record<string, string>): { env: Record<string, string>; log: string } {
  const shim = gitShim(env, 'git-argv.sh', (dir) => ({ RUNPLAN_TEST_GIT_LOG: join(dir, 'git.log') }));
  shims.push(shim);
  return { env: shim.env, log: shim.env.RUNPLAN_TEST_GIT_LOG! };
}

test(
  'a loop that never checkpoints: its round refs go with the run’s receipt',
  withPlan(PLAN.replace('rounds = 3', 'rounds = 2'), { timeoutMs: 120_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    const rs = await records(f.repo, 'refs');
    assert.equal(
      ofType(rs, 'run-failed').map((d) => d.reason),
      ['rounds_exhausted'],
    );
    assert.is(ofType(rs, 'round-done').filter((d) => typeof d.roundRef === 'string').length, 2, 'both rounds were kept while the run ran');
    assert.is(f.repo.git(['for-each-ref', '--format=%(refname)', ROUNDS]), '');
  }),
);

test(
  'a crashed run’s round refs go when a later run of the slug starts (--fresh), even if that run never checkpoints the task',
  withPlan(PLAN, { timeoutMs: 120_000, env: { RUNPLAN_FAILPOINT: 'kill-after:round-done:improve' } }, async (f) => {
    const crashed = await runplan(['run', f.plan], f);
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [old] = runIds(f.repo, 'refs');
    assert.match(f.repo.git(['for-each-ref', '--format=%(refname)', ROUNDS]), new RegExp(`^${ROUNDS}${old}/improve/1/1$`));
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace('mock: until-file rounds.txt 3', 'mock: blocked need a database'));
    const r = await runplan(['run', f.plan, '--fresh'], { env: { ...f.env, RUNPLAN_FAILPOINT: '' } });
    assert.is(r.exitCode, 1, r.stderr);
    assert.is(runIds(f.repo, 'refs').length, 2);
    assert.is(f.repo.git(['for-each-ref', '--format=%(refname)', ROUNDS]), '');
  }),
);

test(
  'a ref git refuses to write is journaled (ref-failed), listed in the receipt and warned about; the run still completes',
  withPlan(PLAN, { timeoutMs: 120_000 }, async (f) => {
    // A ref named refs/runplan/refs makes every ref below it a D/F conflict for git.
    f.repo.git(['update-ref', 'refs/runplan/refs', 'HEAD']);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const rs = await records(f.repo, 'refs');
    const failed = ofType(rs, 'ref-failed');
    const runId = runIds(f.repo, 'refs')[0]!;
    assert.equal(
      failed.map((d) => [d.op, d.ref, d.taskId]),
      [
        ['write', `${ROUNDS}${runId}/improve/1/1`, 'improve'],
        ['write', `${ROUNDS}${runId}/improve/1/2`, 'improve'],
        ['write', `${ROUNDS}${runId}/improve/1/3`, 'improve'],
        ['write', `refs/runplan/refs/runs/${runId}`, null],
      ],
    );
    for (const d of failed) assert.ok(String(d.message).length > 0, 'git’s reason is kept');
    assert.equal(
      ofType(rs, 'round-done').map((d) => d.roundRef),
      [null, null, null],
    );
    const [receipt] = ofType(rs, 'run-complete');
    assert.equal(
      (receipt!.refsFailed as Array<{ ref: string }>).map((x) => x.ref),
      failed.map((d) => d.ref),
    );
    assert.match(r.stderr, new RegExp(`^ {2}warning: ref_failed: could not write refs/runplan/refs/runs/${runId}: `, 'm'));
    assert.match(r.stderr, /ref-failed improve: could not write refs\/runplan\/refs\/rounds\//);
  }),
);

test(
  'a resume lists the slug’s round refs once (one for-each-ref) for the other runs’, the checkpoint’s and the receipt’s deletions',
  withPlan(PLAN, { timeoutMs: 120_000, env: { RUNPLAN_FAILPOINT: 'kill-after:round-done:improve' } }, async (f) => {
    const crashed = await runplan(['run', f.plan], f);
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [runId] = runIds(f.repo, 'refs');
    // A round ref of an older run, for the resume's start to delete.
    f.repo.git(['update-ref', `${ROUNDS}20200101T000000Z-0000/improve/1/1`, 'HEAD']);
    const { env, log } = loggingGit({ ...f.env, RUNPLAN_FAILPOINT: '' });
    const r = await runplan(['run', f.plan], { env });
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(runIds(f.repo, 'refs').length, 1, 'the crashed run was resumed');
    const calls = readFileSync(log, 'utf8').split('\n');
    assert.equal(
      calls.filter((c) => c.startsWith('for-each-ref') && c.includes(ROUNDS)),
      [`for-each-ref --format=%(refname) ${ROUNDS}`],
    );
    // Every round ref went all the same: the old run's, the crashed attempt's and the resumed attempt's.
    assert.equal(
      calls.filter((c) => c.startsWith(`update-ref -d ${ROUNDS}`)),
      [
        `update-ref -d ${ROUNDS}20200101T000000Z-0000/improve/1/1`,
        `update-ref -d ${ROUNDS}${runId}/improve/1/1`,
        `update-ref -d ${ROUNDS}${runId}/improve/2/2`,
        `update-ref -d ${ROUNDS}${runId}/improve/2/3`,
      ],
    );
    assert.is(f.repo.git(['for-each-ref', '--format=%(refname)', ROUNDS]), '');
  }),
);

test.run();
