import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { readJournal } from '@runplan/journal';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, transcriptPath } from '@runplan/test-fixtures';
import { runTagPrefix } from '../src/index.js';
import { jobState, queued, slurmPlan, withSlurmPlan, SLURM_RUN_MS } from './slurm-support.js';
import { mockPlan, ofType, records, runIds, runplan, slugDir, waitForEvent, withPlan, type Fixture } from './support.js';

// The slurm executor on a real single-node cluster (scripts/slurm-local.sh up; CI starts it).
// Every test goes through the real bin; none leaves a job in the queue (withSlurmPlan checks).

// Three tasks, two at once, the last gated: what each task commits must not depend on where it ran.
// `executor`: the slurm executor's lines after its kind; without them the plan runs locally.
const THREE = (executor?: string[]) =>
  (executor === undefined ? mockPlan : slurmPlan)({
    slug: 'three',
    top: ['jobs = 2'],
    executor,
    defaults: ['grace = "1s"'],
    tasks: `[[tasks]]
id = "a"
prompt = """
mock: say on {{task.id}}
mock: write out/a.txt alpha
"""
[[tasks]]
id = "b"
prompt = "mock: write out/b.txt beta"
[[tasks]]
id = "c"
needs = ["a", "b"]
prompt = "mock: write out/c.txt gamma"
gates = [["mock-gate", "0", "c passes"]]
`,
  });

// What each task's result commit changed (path and blob), and the final tree.
function results(f: Fixture, rs: Array<Record<string, any>>): { perTask: Record<string, string>; tree: string } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: f.repo.path, encoding: 'utf8' }).trim();
  const perTask: Record<string, string> = {};
  for (const cp of ofType(rs as never, 'checkpoint')) {
    perTask[cp.taskId] = git('diff-tree', '--no-commit-id', '-r', String(cp.baseCommit), String(cp.resultCommit));
  }
  return { perTask, tree: git('rev-parse', 'refs/heads/runplan/three^{tree}') };
}

test(
  'a 3-task plan with jobs = 2 on Slurm completes with the same result for each task as locally',
  withSlurmPlan(THREE(['partition = "debug"']), { timeoutMs: 120_000 }, async (f) => {
    const run = await runplan(['run', f.plan, '--json'], f, SLURM_RUN_MS);
    assert.is(run.exitCode, 0, run.stderr);
    const rs = await records(f.repo, 'three');
    const submitted = ofType(rs, 'job-submitted');
    // Every command and the gate ran as a job of its own, named by the attempt's ownerTag.
    const started = ofType(rs, 'attempt-started');
    assert.equal(submitted.map((j) => `${j.taskId}:${j.phase}`).sort(), ['a:command', 'b:command', 'c:command', 'c:gates']);
    for (const j of submitted) assert.is(j.name, started.find((s) => s.taskId === j.taskId)?.ownerTag);
    assert.is(new Set(submitted.map((j) => j.jobId)).size, 4, 'four distinct jobs');
    for (const s of started) assert.is(s.executor, 'slurm');
    for (const e of ofType(rs, 'job-ended')) assert.is(e.state, 'COMPLETED', `job ${e.jobId}`);
    // The agent's output was interpreted as it streamed from srun: its usage and final message.
    const settled = ofType(rs, 'command-settled').find((c) => c.taskId === 'a');
    assert.is(settled?.usage.inputTokens, 100);
    assert.match(String(settled?.finalMessage), 'Done: a attempt 1');
    const onSlurm = results(f, rs);

    // The same plan locally, in a fresh repo.
    await withPlan(THREE(), {}, async (local) => {
      const r = await runplan(['run', local.plan, '--json'], local, SLURM_RUN_MS);
      assert.is(r.exitCode, 0, r.stderr);
      const lrs = await records(local.repo, 'three');
      assert.equal(ofType(lrs, 'job-submitted'), [], 'a local plan submits no job');
      assert.not.ok('executor' in (ofType(lrs, 'attempt-started')[0] ?? {}), 'a local attempt-started is as before');
      assert.equal(results(local, lrs), onSlurm);
    })();
  }),
);

// A TERM-ignoring agent past its deadline.
const STUCK = slurmPlan({
  slug: 'stuck',
  tasks: `[[tasks]]
id = "stuck"
prompt = """
mock: ignore-term
mock: say working
mock: sleep 600
"""
deadline = "2s"
grace = "1s"
repair = { timeout = 1 }
`,
});

test(
  "a task past runplan's deadline is cancelled (gone from squeue) and classed timeout",
  withSlurmPlan(STUCK, { timeoutMs: 90_000 }, async (f) => {
    const run = await runplan(['run', f.plan, '--json'], f, SLURM_RUN_MS);
    assert.is(run.exitCode, 1, run.stderr);
    const rs = await records(f.repo, 'stuck');
    const [job] = ofType(rs, 'job-submitted');
    assert.ok(job !== undefined, 'the job was submitted');
    // The job carried the backstop: deadline 2s + grace 1s + margin 30s, rounded up to a minute.
    assert.match(execFileSync('scontrol', ['--oneliner', 'show', 'job', job.jobId], { encoding: 'utf8' }), /TimeLimit=00:01:00/);
    assert.equal(queued(String(job.name)), [], 'the job is gone from the queue');
    assert.not.match(jobState(job.jobId), /TIMEOUT/, "runplan's fence ended it, not Slurm's");
    const [closed] = ofType(rs, 'attempt-closed');
    assert.is(closed?.reason, 'timed_out');
    assert.is(closed?.class, 'timeout');
    assert.match(run.stderr, 'timed_out');
  }),
);

// A task Slurm itself cancels while it runs: someone else's scancel.
const LONG = slurmPlan({
  slug: 'long',
  defaults: ['grace = "1s"'],
  tasks: `[[tasks]]
id = "long"
prompt = """
mock: say working
mock: sleep 600
"""
`,
});

test(
  'a job cancelled by someone else is slurm_cancelled, class environment, not retried',
  withSlurmPlan(LONG, { timeoutMs: 60_000 }, async (f) => {
    const running = runplan(['run', f.plan, '--json'], f, SLURM_RUN_MS);
    await waitForEvent(f.repo, 'long', 'job-submitted', SLURM_RUN_MS);
    const jobId = String(ofType(await records(f.repo, 'long'), 'job-submitted')[0]?.jobId);
    execFileSync('scancel', [jobId]);
    const run = await running;
    assert.is(run.exitCode, 1, run.stderr);
    const rs = await records(f.repo, 'long');
    const closed = ofType(rs, 'attempt-closed');
    assert.is(closed.length, 1, 'not retried');
    assert.is(closed[0]?.reason, 'slurm_cancelled');
    assert.is(closed[0]?.class, 'environment');
    assert.is(jobState(jobId), 'CANCELLED');
    assert.match(run.stderr, 'slurm_cancelled');
  }),
);

test(
  'a submission Slurm refuses (no such partition) is slurm_submit_failed, class environment, not retried',
  withSlurmPlan(THREE(['partition = "no-such-partition"']).replace('jobs = 2', 'jobs = 1'), { timeoutMs: 60_000 }, async (f) => {
    const run = await runplan(['run', f.plan, '--json'], f, SLURM_RUN_MS);
    assert.is(run.exitCode, 1, run.stderr);
    const rs = await records(f.repo, 'three');
    assert.equal(ofType(rs, 'job-submitted'), [], 'no job was accepted');
    const [closed, ...more] = ofType(rs, 'attempt-closed');
    assert.equal(more, [], 'not retried');
    assert.is(closed?.reason, 'slurm_submit_failed');
    assert.is(closed?.class, 'environment');
    assert.match(String(closed?.failure?.evidenceTail), /partition/i, "srun's own words are the evidence");
    // The workdir probe got no answer there either: said, and the run went on to say why.
    assert.match(
      run.stderr,
      /runplan: warning: executor_probe_failed: partition no-such-partition: could not check that its nodes see .*partition/,
    );
  }),
);

// A recorded Claude session whose agent stays alive after its result line.
const LINGER = slurmPlan({
  slug: 'linger',
  agent: 'replay-agent',
  defaults: ['deadline = "1m"', 'grace = "1s"', 'result_grace = "500ms"'],
  tasks: `[[tasks]]
id = "r1"
prompt = "replay"
`,
});

test(
  'an agent lingering after its result on Slurm: torn down result_grace later, a success, its job gone',
  withSlurmPlan(LINGER, { timeoutMs: 60_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('claude-01-success-opus4.jsonl'), REPLAY_LINGER: '300' };
    const run = await runplan(['run', f.plan], { env, repo: f.repo }, SLURM_RUN_MS);
    assert.is(run.exitCode, 0, run.stderr);
    const rs = await records(f.repo, 'linger');
    const [settled] = ofType(rs, 'command-settled');
    assert.is(settled?.lingered, true);
    assert.is(settled?.costUsd, 0.2882215, 'the transcript was interpreted as it streamed from srun');
    assert.is(ofType(rs, 'attempt-closed')[0]?.reason, 'ok');
    const [job] = ofType(rs, 'job-submitted');
    assert.equal(queued(String(job?.name)), []);
  }),
);

// One quick task, then one whose first attempt holds (MOCK_HOLD) while its coordinator is killed.
const CRASH = slurmPlan({
  slug: 'crash',
  defaults: ['grace = "1s"'],
  tasks: `[[tasks]]
id = "first"
prompt = "mock: write out/first.txt 1"
[[tasks]]
id = "second"
needs = ["first"]
prompt = "mock: write out/second.txt 2"
`,
});

test(
  'kill -9 of the coordinator while a job runs: status shows the job, resume cancels it and dispatches nothing twice',
  withSlurmPlan(CRASH, { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, MOCK_HOLD: 'second:1' };
    const crashed = await runplan(
      ['run', f.plan],
      { env: { ...env, RUNPLAN_FAILPOINT: 'kill-after:job-submitted:second' }, repo: f.repo },
      SLURM_RUN_MS,
    );
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [runId] = runIds(f.repo, 'crash');
    const before = await records(f.repo, 'crash');
    const job = ofType(before, 'job-submitted').find((j) => j.taskId === 'second');
    assert.ok(job !== undefined);
    assert.equal(queued(runTagPrefix(runId!)), [job.jobId], 'the crashed attempt left its job running');

    const status = await runplan(['status', 'crash', '--json'], f);
    const row = JSON.parse(status.stdout) as { state: string; jobs?: string[] };
    assert.is(row.state, 'degraded');
    assert.equal(row.jobs, [job.jobId]);
    assert.match(status.stderr, `1 Slurm job(s) of it still queued: ${job.jobId}`);

    const resumed = await runplan(['run', f.plan, '--json'], { env, repo: f.repo }, SLURM_RUN_MS);
    assert.is(resumed.exitCode, 0, resumed.stderr);
    const rs = await records(f.repo, 'crash');
    assert.equal(ofType(rs, 'jobs-cancelled'), [{ tagPrefix: runTagPrefix(runId!), cancelled: [job.jobId], survivors: [] }]);
    assert.equal(queued(runTagPrefix(runId!)), []);
    // The ledger: `first` ran once; `second` once per attempt (the crashed one, then its retry).
    const dispatched = readLedger(f.ledger).map((e) => `${e.task} ${e.attempt}`);
    assert.equal(dispatched.sort(), ['first 1', 'second 1', 'second 2']);
    assert.is(ofType(rs, 'run-complete').length, 1);
  }),
);

test(
  "runplan stop after a crash cancels the run's queued jobs and closes it",
  withSlurmPlan(LONG, { timeoutMs: 60_000 }, async (f) => {
    const crashed = await runplan(
      ['run', f.plan],
      { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:job-submitted:long' }, repo: f.repo },
      SLURM_RUN_MS,
    );
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [runId] = runIds(f.repo, 'long');
    const [job] = ofType(await records(f.repo, 'long'), 'job-submitted');
    assert.equal(queued(runTagPrefix(runId!)), [job?.jobId]);
    const stop = await runplan(['stop', 'long'], f);
    assert.is(stop.exitCode, 0, stop.stderr);
    assert.match(stop.stderr, `jobs_cancelled: run ${runId}: cancelled 1 Slurm job(s): ${job?.jobId}`);
    assert.equal(queued(runTagPrefix(runId!)), []);
    const rs = await records(f.repo, 'long');
    const receipt = ofType(rs, 'run-failed')[0];
    assert.is(receipt?.reason, 'stopped_after_crash');
    // The receipt says what stop ended: the job, never "nothing was alive".
    assert.match(String(receipt?.message), /runplan stop ended (.+ and )?1 Slurm job\(s\)$/);
  }),
);

test(
  "--fresh after a crash cancels the run's queued jobs, says so on stderr and journals jobs-cancelled in the run it abandons",
  withSlurmPlan(LONG, { timeoutMs: 60_000 }, async (f) => {
    const crashed = await runplan(
      ['run', f.plan],
      { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:job-submitted:long' }, repo: f.repo },
      SLURM_RUN_MS,
    );
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [runId] = runIds(f.repo, 'long');
    const [job] = ofType(await records(f.repo, 'long'), 'job-submitted');
    assert.equal(queued(runTagPrefix(runId!)), [job?.jobId]);
    // The fresh run stops right after its start (failpoint): what --fresh did is what is looked at.
    const fresh = await runplan(['run', f.plan, '--fresh'], {
      env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:run-started' },
      repo: f.repo,
    });
    assert.match(fresh.stderr, `jobs_cancelled: run ${runId}: cancelled 1 Slurm job(s): ${job?.jobId}`);
    assert.equal(queued(runTagPrefix(runId!)), []);
    const old = (await readJournal(join(slugDir(f.repo, 'long'), runId!, 'journal.jsonl'))).records;
    assert.equal(
      old.filter((r) => r.type === 'jobs-cancelled').map((r) => (r.data as { cancelled: string[] }).cancelled),
      [[job?.jobId]],
    );
    assert.is((old.at(-1)!.data as { class?: string }).class, 'abandoned');
  }),
);

test.run();
