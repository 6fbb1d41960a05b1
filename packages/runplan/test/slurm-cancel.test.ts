// Slurm jobs of ours that are still queued after runplan cancelled them. The task's command
// (test-fixtures/sh/sbatch-left.sh) submits, from inside its job, a second job whose name
// starts with the attempt's owner tag, so runplan ends it as its own. The `scancel` first on
// runplan's PATH refuses, as a controller that denies the cancel does. The second job is real
// and outlives its parent by design, so what runplan finds after its scancel is deterministic.
// Each test cancels it with the real scancel afterwards.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { shFixture, tempDir, waitUntil } from '@runplan/test-fixtures';
import { runTagPrefix } from '../src/index.js';
import { queued, slurmCli, slurmPlan, SLURM_QUEUE_MS, SLURM_RUN_MS, withSlurmPlan } from './slurm-support.js';
import { ofType, records, runIds, runplan, type Fixture } from './support.js';

const plan = (slug: string, hold: number): string =>
  slurmPlan({
    slug,
    defaults: ['grace = "1s"'],
    tasks: `[[tasks]]
id = "spawner"
command = ["${shFixture('sbatch-left.sh')}", "${hold}"]
format = "text"
prompt = "unused"
`,
  });

// A `scancel` that refuses every job, logging what it was asked, first on the PATH of `f`'s env.
function refusingScancel(f: Fixture): { env: Record<string, string>; log: string; cleanup: () => void } {
  const dir = tempDir('runplan-scancel-');
  const bin = join(dir.path, 'bin');
  const log = join(dir.path, 'scancel.log');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'scancel'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >>'${log}'\nfor id; do case $id in -*) ;; *) echo "scancel: error: Kill job error on job id $id: Access/permission denied" >&2 ;; esac; done\nexit 1\n`,
  );
  chmodSync(join(bin, 'scancel'), 0o755);
  writeFileSync(log, '');
  return { env: { ...f.env, PATH: `${bin}${delimiter}${f.env.PATH}` }, log, cleanup: dir.cleanup };
}

// The jobs named `name`, cancelled with the real scancel, and waited for until gone.
async function cancelNamed(name: string): Promise<void> {
  const ids = queued(name);
  if (ids.length > 0) slurmCli(['scancel', ...ids]);
  await waitUntil('the jobs are gone', () => queued(name).length === 0, { timeoutMs: 60_000 });
}

test(
  'a job of the attempt still queued after a refused scancel: slurm_cancel_failed (class teardown) naming it; the run stops, exit 1',
  withSlurmPlan(plan('left', 0), { timeoutMs: 120_000 }, async (f) => {
    const scancel = refusingScancel(f);
    let left: string | undefined;
    try {
      const run = await runplan(['run', f.plan], { env: scancel.env, repo: f.repo }, SLURM_RUN_MS);
      const rs = await records(f.repo, 'left');
      const [job] = ofType(rs, 'job-submitted');
      assert.ok(job !== undefined, 'the job was submitted');
      left = `${job.name}-left`;
      const [extra] = queued(left);
      assert.ok(extra !== undefined, `the second job is still queued: ${run.stderr}`);
      assert.is(run.exitCode, 1, run.stderr);
      assert.match(readFileSync(scancel.log, 'utf8'), new RegExp(`\\b${extra}\\b`), 'runplan asked scancel');
      const closed = ofType(rs, 'attempt-closed')[0]!;
      assert.is(closed.reason, 'slurm_cancel_failed', JSON.stringify(closed));
      assert.is(closed.class, 'teardown');
      assert.match(String(closed.failure?.message), new RegExp(`still queued after scancel: ${extra}$`), JSON.stringify(closed));
      assert.is(ofType(rs, 'run-failed')[0]?.reason, 'slurm_cancel_failed');
      assert.match(run.stderr, 'slurm_cancel_failed');
      assert.is(ofType(rs, 'checkpoint').length, 0, 'a task whose job could not be ended is not checkpointed');
    } finally {
      if (left !== undefined) await cancelNamed(left);
      scancel.cleanup();
    }
  }),
);

test(
  'runplan stop after a crash whose job scancel refuses: slurm_cancel_failed naming it, exit 3, the run left incomplete; a later stop closes it',
  withSlurmPlan(plan('left-crash', 600), { timeoutMs: 150_000 }, async (f) => {
    const scancel = refusingScancel(f);
    let left: string | undefined;
    try {
      const crashed = await runplan(
        ['run', f.plan],
        { env: { ...scancel.env, RUNPLAN_FAILPOINT: 'kill-after:job-submitted:spawner' }, repo: f.repo },
        SLURM_RUN_MS,
      );
      assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
      const [runId] = runIds(f.repo, 'left-crash');
      const [job] = ofType(await records(f.repo, 'left-crash'), 'job-submitted');
      assert.ok(job !== undefined && runId !== undefined);
      left = `${job.name}-left`;
      const name = left;
      // The command goes on without its coordinator: its second job is submitted meanwhile.
      const extra = await waitUntil('the second job is queued', () => queued(name)[0], { timeoutMs: 60_000 + SLURM_QUEUE_MS });

      const stop = await runplan(['stop', 'left-crash'], { env: scancel.env, repo: f.repo });
      assert.is(stop.exitCode, 3, stop.stderr);
      assert.match(
        stop.stderr,
        new RegExp(`slurm_cancel_failed: run ${runId}: still queued after scancel: .*\\b${extra}\\b.*; the run is left incomplete`),
      );
      assert.match(readFileSync(scancel.log, 'utf8'), new RegExp(`\\b${extra}\\b`), 'runplan asked scancel');
      let rs = await records(f.repo, 'left-crash');
      const [cancelled] = ofType(rs, 'jobs-cancelled');
      assert.is(cancelled?.tagPrefix, runTagPrefix(runId));
      assert.ok(((cancelled?.survivors ?? []) as string[]).includes(extra), JSON.stringify(cancelled));
      assert.is(ofType(rs, 'run-failed').length, 0, 'no receipt while a job of it is queued');

      // With a scancel that works, the next stop ends the job and closes the run.
      const again = await runplan(['stop', 'left-crash'], f);
      assert.is(again.exitCode, 0, again.stderr);
      assert.equal(queued(runTagPrefix(runId)), []);
      rs = await records(f.repo, 'left-crash');
      assert.is(ofType(rs, 'run-failed')[0]?.reason, 'stopped_after_crash');
    } finally {
      if (left !== undefined) await cancelNamed(left);
      scancel.cleanup();
    }
  }),
);

test(
  'a run after one whose jobs were not verified gone ends them first: refused (exit 3, nothing run) while scancel refuses, then cancelled and said before the run starts',
  withSlurmPlan(plan('left-next', 0), { timeoutMs: 180_000 }, async (f) => {
    const scancel = refusingScancel(f);
    let left: string | undefined;
    try {
      const first = await runplan(['run', f.plan], { env: scancel.env, repo: f.repo }, SLURM_RUN_MS);
      assert.is(first.exitCode, 1, first.stderr);
      const [runId] = runIds(f.repo, 'left-next');
      const [job] = ofType(await records(f.repo, 'left-next'), 'job-submitted');
      assert.ok(job !== undefined && runId !== undefined);
      left = `${job.name}-left`;
      const [extra] = queued(left);
      assert.ok(extra !== undefined, `the second job is still queued: ${first.stderr}`);

      // While its job cannot be ended, no run starts beside it (the task would run again next to it).
      const refused = await runplan(['run', f.plan, '--retry', 'spawner'], { env: scancel.env, repo: f.repo }, SLURM_RUN_MS);
      assert.is(refused.exitCode, 3, refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(
          `^runplan: slurm_cancel_failed: run ${runId} ended slurm_cancel_failed and its Slurm jobs could not be ended: .*\\b${extra}\\b`,
          'm',
        ),
      );
      assert.match(refused.stderr, `their names start with ${runTagPrefix(runId)}`);
      assert.equal(runIds(f.repo, 'left-next'), [runId], 'no run was started');
      assert.equal(queued(left), [extra]);

      // With a scancel that works, the next run ends it first and says so.
      const next = await runplan(['run', f.plan, '--retry', 'spawner'], f, SLURM_RUN_MS);
      assert.match(next.stderr, new RegExp(`^runplan: jobs_cancelled: run ${runId}: cancelled 1 Slurm job\\(s\\) it left: ${extra}$`, 'm'));
      assert.equal(queued(runTagPrefix(runId)), []);
      assert.is(runIds(f.repo, 'left-next').length, 2, next.stderr);
    } finally {
      if (left !== undefined) await cancelNamed(left);
      scancel.cleanup();
    }
  }),
);

test.run();
