// A Slurm job of ours that is still queued after runplan cancelled it: srun dies (SIGKILL, so
// it cancels nothing itself) while the job runs, and the `scancel` first on the coordinator's
// PATH does nothing, as a controller that does not answer would. The attempt ends as
// slurm_cancel_failed, class teardown, which stops the run, and the job id is named. The test
// cancels the job itself afterwards with the real scancel.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin, tempDir, waitUntil } from '@runplan/test-fixtures';
import { queued, slurmCli, slurmPlan, SLURM_QUEUE_MS, withSlurmPlan } from './slurm-support.js';
import { alive, ofType, records, RUNPLAN } from './support.js';

const STUCK = slurmPlan({
  slug: 'stuck',
  tasks: `[[tasks]]
id = "stuck"
prompt = """
mock: say working
mock: sleep 600
"""
deadline = "5m"
grace = "1s"
`,
});

test(
  'srun killed and a scancel that cancels nothing: slurm_cancel_failed (class teardown) naming the job still queued; the run stops',
  withSlurmPlan(STUCK, { timeoutMs: 180_000 }, async (f) => {
    const shim = tempDir('runplan-scancel-');
    const log = join(shim.path, 'scancel.log');
    let jobId: string | undefined;
    let coordinator: number | undefined;
    try {
      const bin = join(shim.path, 'bin');
      mkdirSync(bin);
      writeFileSync(join(bin, 'scancel'), `#!/bin/sh\nprintf '%s\\n' "$*" >>'${log}'\nexit 0\n`);
      chmodSync(join(bin, 'scancel'), 0o755);
      const env = { ...f.env, PATH: `${bin}${delimiter}${f.env.PATH}` };
      const running = runBin(RUNPLAN, ['run', f.plan], {
        cwd: f.repo.path,
        env,
        timeoutMs: 150_000 + SLURM_QUEUE_MS,
        onSpawn: (pid) => (coordinator = pid),
      });
      // The job runs: its srun is killed so that it cannot cancel the job on its way out.
      const submitted = await waitUntil(
        'the job runs',
        async () => {
          const job = ofType(await records(f.repo, 'stuck').catch(() => []), 'job-submitted')[0];
          // Its step is running: the agent is on the node (its ledger line), not only the
          // allocation (an allocation with no step yet goes with its srun).
          const running =
            job !== undefined &&
            readLedger(f.ledger).length > 0 &&
            slurmCli(['squeue', '--noheader', '--format=%T', '--job', String(job.jobId)]).stdout.trim() === 'RUNNING';
          return running ? job : undefined;
        },
        { timeoutMs: 60_000 + SLURM_QUEUE_MS },
      );
      jobId = String(submitted.jobId);
      assert.equal(queued(String(submitted.name)), [jobId], 'the job is queued before its srun dies');
      // srun and the helper it forks, at once.
      const srun = execFileSync('pgrep', ['-f', `^srun .*--job-name=${submitted.name}`], { encoding: 'utf8' })
        .trim()
        .split('\n');
      for (const pid of srun) process.kill(Number(pid), 'SIGKILL');
      const run = await running;
      const rs = await records(f.repo, 'stuck');
      assert.is(run.exitCode, 1, run.stderr);
      assert.match(readFileSync(log, 'utf8'), new RegExp(`\\b${jobId}\\b`), 'runplan asked scancel');
      const closed = ofType(rs, 'attempt-closed')[0]!;
      assert.is(closed.reason, 'slurm_cancel_failed', JSON.stringify(closed));
      assert.is(closed.class, 'teardown');
      assert.match(String(closed.failure?.message), new RegExp(`still queued after scancel: ${jobId}$`), JSON.stringify(closed));
      assert.is(ofType(rs, 'run-failed')[0]?.reason, 'slurm_cancel_failed');
    } finally {
      // A coordinator the test failed before: never left running.
      if (coordinator !== undefined && alive(coordinator)) process.kill(coordinator, 'SIGKILL');
      if (jobId !== undefined) slurmCli(['scancel', jobId]);
      await waitUntil('the job is gone', () => queued('').every((id) => id !== jobId), { timeoutMs: 60_000 });
      shim.cleanup();
    }
  }),
);

test.run();
