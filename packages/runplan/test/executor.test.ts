import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { agentsPath, readLedger, tempDir } from '@runplan/test-fixtures';
import type { Execution } from '@runplan/settle';
import { jobOutcome } from '../src/executor/slurm/outcome.js';
import { backstopMinutes, srunArgv } from '../src/executor/slurm/submit.js';
import { decideRepair, emptyHistory, recordFailure } from '../src/repair/index.js';
import { classified } from '../src/events/reasons.js';
import { slurmPlan } from './slurm-support.js';
import { ofType, records, runIds, runplan, withPlan } from './support.js';

// The executor keys, the refusal without Slurm's tools, and the outcome mapping: none of
// this needs a cluster (slurm.test.ts runs on one).

const BAD = `
slug = "bad"
[executor]
kind = "slurm"
extra_args = ["--time=5", "gpu", "--mem=1G", "--no-kill", "-k"]
bogus = 1
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
[[tasks]]
id = "a"
executor = { kind = "local", partition = "debug" }
[[tasks]]
id = "b"
executor = { partition = "debug" }
[[tasks]]
id = "c"
executor = { kind = "slurm", account = "two words" }
`;

test(
  'validate refuses executor keys that make no sense, each at its key path',
  withPlan(BAD, {}, async (f) => {
    const r = await runplan(['validate', f.plan], f);
    assert.is(r.exitCode, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    const at = (reason: string, path: string) => lines.some((l) => l.startsWith(`runplan: ${reason}: `) && l.includes(`: ${path}: `));
    assert.ok(at('unknown_key', 'executor.bogus'), r.stderr);
    assert.ok(at('executor_option_reserved', 'executor.extra_args[0]'), r.stderr);
    assert.ok(at('executor_option_invalid', 'executor.extra_args[1]'), r.stderr);
    assert.not.ok(r.stderr.includes('extra_args[2]'), '--mem=1G is an option srun takes');
    assert.ok(at('executor_option_refused', 'executor.extra_args[3]'), r.stderr);
    assert.ok(at('executor_option_refused', 'executor.extra_args[4]'), r.stderr);
    assert.ok(at('executor_key_unused', 'tasks[0].executor.partition'), r.stderr);
    assert.ok(at('missing_key', 'tasks[1].executor.kind'), r.stderr);
    assert.ok(at('bad_identifier', 'tasks[2].executor.account'), r.stderr);
  }),
);

test(
  'gates_executor = "slurm" needs a slurm executor',
  withPlan(
    `slug = "g"\n[[tasks]]\nid = "a"\ncommand = ["true"]\ngates_executor = "slurm"\n[[tasks]]\nid = "b"\ncommand = ["true"]\ngates_executor = "elsewhere"\n`,
    {},
    async (f) => {
      const r = await runplan(['validate', f.plan], f);
      assert.is(r.exitCode, 2, r.stderr);
      assert.match(r.stderr, /runplan: executor_missing: .*: tasks\[0\]\.gates_executor: /);
      assert.match(r.stderr, /runplan: bad_value: .*: tasks\[1\]\.gates_executor: /);
    },
  ),
);

const ON_SLURM = slurmPlan({
  slug: 'onslurm',
  tasks: `[[tasks]]
id = "a"
prompt = "mock: write out/a.txt a"
[[tasks]]
id = "cheap"
executor = { kind = "local" }
prompt = "mock: write out/cheap.txt c"
`,
});

// A PATH with node, git and the mock agents, plus the named Slurm tools (links to harmless `true`).
function pathWith(dir: string, tools: string[]): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync('/usr/bin/git', join(bin, 'git'));
  for (const tool of tools) symlinkSync('/bin/true', join(bin, tool));
  return `${agentsPath()}:${bin}`;
}

test(
  'without the Slurm tools on PATH: validate warns, run refuses (exit 3) before any dispatch',
  withPlan(ON_SLURM, {}, async (f) => {
    const scratch = tempDir('runplan-path-');
    try {
      const env = { ...f.env, PATH: pathWith(scratch.path, ['srun', 'sbatch', 'squeue', 'scancel']) };
      const v = await runplan(['validate', f.plan], { env, repo: f.repo });
      assert.is(v.exitCode, 0, v.stderr);
      assert.match(v.stderr, `runplan: warning: executor_unavailable: ${f.plan}: executor: sacct not on PATH`);
      const r = await runplan(['run', f.plan], { env, repo: f.repo });
      assert.is(r.exitCode, 3, r.stderr);
      assert.match(r.stderr, 'runplan: executor_unavailable: ');
      assert.match(r.stderr, 'sacct is not on PATH');
      assert.equal(readLedger(f.ledger), [], 'nothing was dispatched');
      assert.equal(runIds(f.repo, 'onslurm'), [], 'no run was started');
    } finally {
      scratch.cleanup();
    }
  }),
);

test(
  'a controller that does not answer (srun and squeue fail): the probe proves nothing, a warning, and the run goes on',
  withPlan(ON_SLURM, {}, async (f) => {
    const scratch = tempDir('runplan-path-');
    try {
      const env = { ...f.env, PATH: pathWith(scratch.path, []) };
      // Slurm's clients as they answer with slurmctld down: one line on stderr, exit 1.
      for (const tool of ['srun', 'sbatch', 'squeue', 'scancel', 'sacct', 'scontrol']) {
        const file = join(scratch.path, 'bin', tool);
        writeFileSync(file, `#!/bin/sh\necho "${tool}: error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n`);
        chmodSync(file, 0o755);
      }
      const r = await runplan(['run', f.plan], { env, repo: f.repo });
      assert.match(r.stderr, /^runplan: warning: executor_probe_failed: .*Unable to contact slurm controller/m);
      assert.equal(runIds(f.repo, 'onslurm').length, 1, `the run started: ${r.stderr}`);
      assert.not.match(r.stderr, /^runplan: internal_error: squeue/m);
      // The attempt itself: nothing it started can be verified ended, said as such (it was
      // internal_error, class engine: runplan's own unexpected error).
      assert.is(r.exitCode, 1, r.stderr);
      const closed = ofType(await records(f.repo, 'onslurm'), 'attempt-closed');
      assert.equal(
        closed.map((data) => [data.reason, data.class]),
        [['slurm_unreachable', 'teardown']],
      );
      assert.match(r.stderr, /slurm_unreachable.*Unable to contact slurm controller/);
    } finally {
      scratch.cleanup();
    }
  }),
);

test(
  'the controller stops answering while a job runs: at the deadline srun is ended all the same and the attempt is slurm_unreachable, never a hang or a crash',
  withPlan(ON_SLURM.replace('prompt = "mock: write out/a.txt a"', 'prompt = "mock: write out/a.txt a"\ndeadline = "2s"'), {}, async (f) => {
    const scratch = tempDir('runplan-path-');
    try {
      const env = { ...f.env, PATH: pathWith(scratch.path, []) };
      // The probe's srun (it runs in /) fails as with the controller down; the attempt's srun
      // holds on as a job would; every other client cannot reach the controller.
      for (const tool of ['srun', 'sbatch', 'squeue', 'scancel', 'sacct', 'scontrol']) {
        const file = join(scratch.path, 'bin', tool);
        const holds = tool === 'srun' ? 'case " $* " in *" --chdir=/ "*) ;; *) exec /bin/sleep 30 ;; esac\n' : '';
        writeFileSync(file, `#!/bin/sh\n${holds}echo "${tool}: error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n`);
        chmodSync(file, 0o755);
      }
      const r = await runplan(['run', f.plan, '--keep-going'], { env, repo: f.repo });
      assert.is(r.exitCode, 1, r.stderr);
      const closed = ofType(await records(f.repo, 'onslurm'), 'attempt-closed').filter((data) => data.taskId === 'a');
      assert.equal(
        closed.map((data) => [data.reason, data.class]),
        [['slurm_unreachable', 'teardown']],
      );
      assert.not.match(r.stderr, /internal_error|unhandled/i);
    } finally {
      scratch.cleanup();
    }
  }),
);

test(
  'an attempt closed slurm_unreachable under a run whose receipt is another task’s failure: the next run still ends its jobs first, and refuses (exit 3) while Slurm cannot be asked',
  withPlan(
    ON_SLURM.replace('prompt = "mock: write out/a.txt a"', 'prompt = "mock: write out/a.txt a"\ndeadline = "2s"').replace(
      'prompt = "mock: write out/cheap.txt c"',
      'command = ["/bin/false"]',
    ),
    {},
    async (f) => {
      const scratch = tempDir('runplan-path-');
      try {
        const env = { ...f.env, PATH: pathWith(scratch.path, []) };
        // As above: the attempt's srun holds on as a job would; no client reaches the controller.
        for (const tool of ['srun', 'sbatch', 'squeue', 'scancel', 'sacct', 'scontrol']) {
          const file = join(scratch.path, 'bin', tool);
          const holds = tool === 'srun' ? 'case " $* " in *" --chdir=/ "*) ;; *) exec /bin/sleep 30 ;; esac\n' : '';
          writeFileSync(
            file,
            `#!/bin/sh\n${holds}echo "${tool}: error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n`,
          );
          chmodSync(file, 0o755);
        }
        // cheap fails at once and its failure is the run's receipt; a's attempt ends slurm_unreachable after.
        const first = await runplan(['run', f.plan, '--jobs', '2'], { env, repo: f.repo });
        assert.is(first.exitCode, 1, first.stderr);
        const closed = ofType(await records(f.repo, 'onslurm'), 'attempt-closed').filter((data) => data.taskId === 'a');
        assert.equal(
          closed.map((data) => data.reason),
          ['slurm_unreachable'],
        );
        assert.not.match(first.stderr, /run-failed: teardown/);
        const [runId] = runIds(f.repo, 'onslurm');
        // Run again beside a job not verified gone, a would run twice.
        const next = await runplan(['run', f.plan, '--retry', 'cheap', '--retry', 'a'], { env, repo: f.repo });
        assert.is(next.exitCode, 3, next.stderr);
        assert.match(next.stderr, new RegExp(`^runplan: slurm_cancel_failed: run ${runId} `, 'm'));
        assert.equal(runIds(f.repo, 'onslurm'), [runId], 'no run was started');
      } finally {
        scratch.cleanup();
      }
    },
  ),
);

test(
  'a local plan needs no Slurm tool',
  withPlan(ON_SLURM.replace('kind = "slurm"', 'kind = "local"'), {}, async (f) => {
    const scratch = tempDir('runplan-path-');
    try {
      const env = { ...f.env, PATH: pathWith(scratch.path, []) };
      const v = await runplan(['validate', f.plan], { env, repo: f.repo });
      assert.is(v.exitCode, 0, v.stderr);
      assert.not.match(v.stderr, 'warning');
    } finally {
      scratch.cleanup();
    }
  }),
);

test('the job carries the backstop: deadline + grace + 30 s margin, in whole minutes rounded up', () => {
  assert.is(backstopMinutes(2_000, 1_000), 1);
  assert.is(backstopMinutes(30 * 60_000, 10_000), 31);
  assert.is(backstopMinutes(29 * 60_000 + 20_000, 10_000), 30);
  const argv = srunArgv(
    { kind: 'slurm', partition: 'debug', account: 'acct', extraArgs: ['--mem=1G'] },
    {
      argv: ['claude', '-p'],
      cwd: '/shared/tree',
      ownerTag: 'rX_1',
      timeMinutes: 31,
    },
  );
  assert.equal(argv, [
    'srun',
    '--job-name=rX_1',
    '--comment=rX_1',
    '--chdir=/shared/tree',
    '--time=31',
    '--ntasks=1',
    '--quiet',
    '--partition=debug',
    '--account=acct',
    '--mem=1G',
    '--',
    'claude',
    '-p',
  ]);
});

const EXITED: Execution = {
  reason: 'exited',
  exitCode: 1,
  signal: null,
  pid: 1,
  durationMs: 5,
  graceMs: 1000,
  ownership: 'group+tag',
  teardown: { result: 'none', signalled: [], survivors: [], heldPipe: false },
  bytesIn: 0,
  bytesOut: 0,
  tag: 't',
};

test("the outcome is the engine's record, never srun's exit code alone", () => {
  const job = (state: string, exitCode = 0, signalNumber = 0) => ({ jobId: '7', state, exitCode, signalNumber, nodes: 'n1' });
  assert.is(jobOutcome(EXITED, job('TIMEOUT'), false).execution.reason, 'timed_out');
  assert.is(jobOutcome(EXITED, job('DEADLINE'), false).execution.reason, 'timed_out');
  assert.is(jobOutcome(EXITED, job('CANCELLED'), false).engine?.reason, 'slurm_cancelled');
  assert.is(jobOutcome(EXITED, job('CANCELLED'), true).engine, undefined, 'cancelled by us: the teardown reason stands');
  assert.is(jobOutcome(EXITED, job('OUT_OF_MEMORY'), false).engine?.reason, 'slurm_out_of_memory');
  assert.is(jobOutcome(EXITED, job('NODE_FAIL'), false).engine?.reason, 'slurm_node_failed');
  assert.is(jobOutcome(EXITED, job('PREEMPTED'), false).engine?.reason, 'slurm_preempted');
  const failed = jobOutcome({ ...EXITED, exitCode: 1 }, job('FAILED', 3), false);
  assert.equal([failed.execution.reason, failed.execution.exitCode, failed.engine], ['exited', 3, undefined]);
  const killed = jobOutcome(EXITED, job('FAILED', 0, 9), false);
  assert.equal([killed.execution.reason, killed.execution.signal], ['signaled', 'SIGKILL']);
  assert.is(jobOutcome(EXITED, undefined, false).engine?.reason, 'slurm_submit_failed');
  assert.is(jobOutcome({ ...EXITED, exitCode: 0 }, undefined, false).engine, undefined);
  assert.is(jobOutcome({ ...EXITED, reason: 'stalled' }, job('CANCELLED'), false).execution.reason, 'stalled');
});

test('a lost node or a preemption is retried once as a new attempt, then the task stops (environment)', () => {
  for (const reason of ['slurm_node_failed', 'slurm_preempted'] as const) {
    const failure = { ...classified(reason), fingerprint: 'f' };
    assert.is(failure.class, 'environment');
    const first = decideRepair(failure, emptyHistory());
    assert.is(first.action, 'retry', reason);
    const second = decideRepair(failure, recordFailure(emptyHistory(), { ...failure, attempt: 1 }));
    assert.is(second.action, 'stop', reason);
  }
  assert.is(decideRepair({ ...classified('slurm_cancelled'), fingerprint: 'f' }, emptyHistory()).action, 'stop');
  assert.is(decideRepair({ ...classified('slurm_out_of_memory'), fingerprint: 'f' }, emptyHistory()).action, 'stop');
});

test.run();
