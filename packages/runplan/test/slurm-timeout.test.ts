import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jobState, queued, slurmPlan, SLURM_QUEUE_MS, withSlurmPlan } from './slurm-support.js';
import { ofType, records, runplan } from './support.js';

// Slurm's own fence: with runplan's disabled (a test-only fail point), the job's backstop
// `--time` ends it and the outcome is read from Slurm (TIMEOUT → timed_out). Slurm's limits
// are whole minutes, checked about every 30 s: this test costs 60–90 s.

const ORPHAN = slurmPlan({
  slug: 'orphan',
  tasks: `[[tasks]]
id = "orphan"
prompt = """
mock: say working
mock: sleep 600
"""
deadline = "1s"
grace = "1s"
repair = { timeout = 1 }
`,
});

test(
  "a job Slurm itself times out (runplan's fence disabled) is timed_out",
  withSlurmPlan(ORPHAN, { timeoutMs: 180_000 }, async (f) => {
    const run = await runplan(
      ['run', f.plan, '--json'],
      { env: { ...f.env, RUNPLAN_SLURM_FAILPOINT: 'no-fence' }, repo: f.repo },
      170_000 + SLURM_QUEUE_MS,
    );
    assert.is(run.exitCode, 1, run.stderr);
    const rs = await records(f.repo, 'orphan');
    const [job] = ofType(rs, 'job-submitted');
    assert.ok(job !== undefined);
    assert.is(jobState(job.jobId), 'TIMEOUT');
    assert.equal(
      ofType(rs, 'job-ended').map((e) => e.state),
      ['TIMEOUT'],
    );
    // Slurm keeps a job's start in whole seconds (truncated), so its 1-minute limit can end
    // the job up to a second short of 60 s on our clock; runplan's own deadline was 1 s.
    const [settled] = ofType(rs, 'command-settled');
    assert.ok(
      Number(settled?.durationMs) >= 59_000,
      `Slurm ended it at its --time (1 minute), not at runplan's deadline: ${settled?.durationMs}ms`,
    );
    const [closed] = ofType(rs, 'attempt-closed');
    assert.is(closed?.reason, 'timed_out');
    assert.is(closed?.class, 'timeout');
    assert.equal(queued(String(job.name)), []);
  }),
);

test.run();
