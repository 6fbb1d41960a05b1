import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from '@runplan/test-fixtures';
import { render } from './chromium.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { slurmPlan, withSlurmPlan, SLURM_RUN_MS } from './slurm-support.js';
import { ofType, records, runIds, runplan } from './support.js';

// What people read of a Slurm run: the progress lines on stderr (no --json, no terminal)
// name each job and its state; `runplan report` lists each attempt's jobs (JSON, and the HTML
// in Chromium); `runplan log`
// counts attempts, not jobs.

// One task whose first attempt holds (MOCK_HOLD) while its coordinator is killed.
const HELD = slurmPlan({
  slug: 'held',
  defaults: ['grace = "1s"'],
  tasks: `[[tasks]]
id = "p"
prompt = "mock: write out/p.txt 1"
gates = [["mock-gate", "0", "p passes"]]
`,
});

test(
  'progress lines name the Slurm jobs (submitted, ended, cancelled after a crash); the report lists them per attempt',
  withSlurmPlan(HELD, { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, MOCK_HOLD: 'p:1' };
    const crashed = await runplan(
      ['run', f.plan],
      { env: { ...env, RUNPLAN_FAILPOINT: 'kill-after:job-submitted:p' }, repo: f.repo },
      SLURM_RUN_MS,
    );
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [first] = ofType(await records(f.repo, 'held'), 'job-submitted');
    assert.ok(first !== undefined);
    assert.match(crashed.stderr, new RegExp(`^runplan: \\S+ job-submitted p #1: slurm job ${first.jobId} \\(command\\)$`, 'm'));

    const resumed = await runplan(['run', f.plan], { env, repo: f.repo }, SLURM_RUN_MS);
    assert.is(resumed.exitCode, 0, resumed.stderr);
    const node = execFileSync('sinfo', ['--noheader', '--format=%n'], { encoding: 'utf8' }).trim().split('\n')[0];
    const rs = await records(f.repo, 'held');
    const [command, gate] = ofType(rs, 'job-submitted').filter((j) => j.attempt === 2);
    assert.ok(command !== undefined && gate !== undefined);
    const lines = resumed.stderr.split('\n').map((l) => l.replace(/^runplan: \d\d:\d\d:\d\d /, ''));
    for (const want of [
      `jobs-cancelled: cancelled 1 Slurm job(s) left by an earlier coordinator: ${first.jobId}`,
      `job-submitted p #2: slurm job ${command.jobId} (command)`,
      `job-ended p #2: slurm job ${command.jobId} COMPLETED exit=0 on ${node}`,
      `job-submitted p #2: slurm job ${gate.jobId} (gates)`,
      `job-ended p #2: slurm job ${gate.jobId} COMPLETED exit=0 on ${node}`,
    ]) {
      assert.ok(lines.includes(want), `no line ${JSON.stringify(want)} in:\n${resumed.stderr}`);
    }

    const [runId] = runIds(f.repo, 'held');
    const report = await runplan(['report', 'held', '--json'], f);
    assert.is(report.exitCode, 0, report.stderr);
    const data = JSON.parse(report.stdout) as { attempts: Array<{ attempt: number; jobs: unknown }> };
    assert.equal(
      data.attempts.map((a) => [a.attempt, a.jobs]),
      [
        // The crashed attempt's job was cancelled by the resume: Slurm's end of it was never journaled.
        [1, [{ jobId: first.jobId, phase: 'command', state: null }]],
        [
          2,
          [
            { jobId: command.jobId, phase: 'command', state: 'COMPLETED' },
            { jobId: gate.jobId, phase: 'gates', state: 'COMPLETED' },
          ],
        ],
      ],
    );
    // And as a person reads it: the HTML in Chromium names each job, nothing logged.
    const out = tempDir('runplan-slurm-report-');
    try {
      const html = join(out.path, 'report.html');
      const written = await runplan(['report', 'held', '--out', html], f);
      assert.is(written.exitCode, 0, written.stderr);
      const page = await render(html);
      assert.equal(page.console, []);
      assert.ok(page.dom.includes(`Slurm job ${first.jobId} (command): no record`), 'the crashed attempt lists its cancelled job');
      assert.ok(page.dom.includes(`p #2: success, Slurm job ${command.jobId} ${gate.jobId}`), "the attempt's bar names its jobs");
    } finally {
      out.cleanup();
    }
    const log = await runplan(['log', 'held'], f);
    assert.match(log.stdout, new RegExp(`${runId} .* complete +1/1 +2 `), 'two attempts, however many jobs');
  }),
);

test.run();
