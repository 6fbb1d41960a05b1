import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin, shFixture, tempDir } from '@runplan/test-fixtures';
import { slurmPlan, withSlurmPlan, SLURM_RUN_MS } from './slurm-support.js';
import { ofType, records, RUNPLAN, runIds, runplan } from './support.js';

// Before its first submission a Slurm run checks that the partition's node sees the
// workdir: a marker with a nonce, written by the coordinator, read back by one srun job.
// The directory the node cannot see is real: the coordinator runs in a private mount
// namespace with a tmpfs over the workdir (test-fixtures/sh/private-tmpfs.sh), so its
// worktrees are where slurmd — outside that namespace — has only an empty directory.

const PLAN = slurmPlan({
  slug: 'unshared',
  top: ['workdir = "@WORK@/{{run.id}}.{{task.id}}.{{run.attempt}}"'],
  defaults: ['grace = "1s"'],
  tasks: `[[tasks]]
id = "a"
prompt = "mock: write out/a.txt alpha"
`,
});

const work = tempDir('runplan-unshared-');

test(
  'a workdir the Slurm node cannot see: refused (exit 3, executor_workdir_not_shared) before any dispatch',
  withSlurmPlan(PLAN, { timeoutMs: 90_000, replacements: { '@WORK@': work.path } }, async (f) => {
    const node = execFileSync('sinfo', ['--noheader', '--format=%n'], { encoding: 'utf8' }).trim().split('\n')[0];
    const run = await runBin(shFixture('private-tmpfs.sh'), [work.path, process.execPath, RUNPLAN, 'run', f.plan, '--json'], {
      env: f.env,
      cwd: f.repo.path,
      timeoutMs: 150_000,
    });
    assert.is(run.exitCode, 3, run.stderr);
    assert.match(
      run.stderr,
      `runplan: executor_workdir_not_shared: node ${node} of the default partition cannot see ${work.path}, where the attempts' worktrees are made; no task was dispatched`,
    );
    assert.match(run.stderr, 'hint: set `workdir`');
    assert.equal(readLedger(f.ledger), [], 'no agent ran');
    assert.equal(runIds(f.repo, 'unshared'), [], 'no run was started');
    assert.equal(readdirSync(work.path), [], 'nothing was made where the node looks (the marker was on the private tmpfs)');

    // The same plan where the node does see the workdir runs, through the same probe.
    const shared = await runplan(['run', f.plan, '--json'], f, SLURM_RUN_MS);
    assert.is(shared.exitCode, 0, shared.stderr);
    const rs = await records(f.repo, 'unshared');
    assert.is(ofType(rs, 'job-submitted').length, 1);
    assert.equal(
      readdirSync(work.path).filter((n) => n.startsWith('.runplan-probe-')),
      [],
      'the probe cleans its marker up',
    );
  }),
);

test.after(() => work.cleanup());

test.run();
