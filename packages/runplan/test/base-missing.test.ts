// A base that no longer resolves when a run would be resumed or continued (real bin): a
// refusal (exit 3, base_missing, nothing written) that names the run and the commit it
// started from, and how to take it up from there.
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { journalPath, records, runIds, runplan, withPlan } from './support.js';

function onBase(plan: string, base: string, extra = ''): void {
  writeFileSync(plan, readFileSync(plan, 'utf8').replace(/^base = ".*"$/m, `base = "${base}"${extra}`));
}

test(
  'resume: the base branch was deleted after a crash — refused naming the incomplete run and its base commit; base = that commit resumes it',
  withPlan('single', { timeoutMs: 120_000, env: { RUNPLAN_FAILPOINT: 'kill-after:attempt-started:only' } }, async (f) => {
    f.repo.git(['branch', 'feature', 'main']);
    const sha = f.repo.git(['rev-parse', 'feature']);
    onBase(f.plan, 'feature');
    const crashed = await runplan(['run', f.plan], f);
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    f.env.RUNPLAN_FAILPOINT = '';
    const [run] = runIds(f.repo, 'single');
    f.repo.git(['branch', '-D', 'feature']);
    const journal = readFileSync(journalPath(f.repo, 'single'));
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^runplan: base_missing: base "feature" of .* names no commit in .*; incomplete run ${run} of slug single started from ${sha}$`,
        'm',
      ),
    );
    assert.match(r.stderr, new RegExp(`^  hint: to take it up from there set base = "${sha}" in `, 'm'));
    assert.equal(readFileSync(journalPath(f.repo, 'single')), journal, 'nothing written');
    assert.equal(runIds(f.repo, 'single'), [run]);
    onBase(f.plan, sha);
    const resumed = await runplan(['run', f.plan], f);
    assert.is(resumed.exitCode, 0, resumed.stderr);
    assert.equal(runIds(f.repo, 'single'), [run], 'the same run, resumed');
    assert.ok((await records(f.repo, 'single')).some((x) => x.type === 'coordinator-crashed'));
  }),
);

test(
  'continuation: the base branch was deleted after a failed run — refused naming the failed run; base = that commit continues it',
  withPlan('budget', { timeoutMs: 120_000 }, async (f) => {
    f.repo.git(['branch', 'feature', 'main']);
    const sha = f.repo.git(['rev-parse', 'feature']);
    onBase(f.plan, 'feature');
    const failed = await runplan(['run', f.plan], f);
    assert.is(failed.exitCode, 1, failed.stderr);
    const [run] = runIds(f.repo, 'budget');
    f.repo.git(['branch', '-D', 'feature']);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`^runplan: base_missing: base "feature" .*; failed run ${run} of slug budget started from ${sha}$`, 'm'),
    );
    assert.equal(runIds(f.repo, 'budget'), [run]);
    onBase(f.plan, sha);
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace(/^max_tokens = 1500$/m, 'max_tokens = 10000'));
    const continued = await runplan(['run', f.plan], f);
    assert.is(continued.exitCode, 0, continued.stderr);
    const started = (await records(f.repo, 'budget')).find((x) => x.type === 'run-started')!.data as Record<string, unknown>;
    assert.equal([started.continues, started.baseCommit], [run, sha]);
  }),
);

test(
  'no earlier run: base_missing says only how to fix the plan',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    onBase(f.plan, 'nowhere');
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /^runplan: base_missing: base "nowhere" of .* names no commit in \S+$/m);
    assert.match(r.stderr, /^ {2}hint: point base in .* at a branch, tag or commit that exists/m);
  }),
);

test.run();
