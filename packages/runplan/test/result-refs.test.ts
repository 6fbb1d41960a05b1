// Reruns never lose a result: every completed run's result stays reachable under
// refs/runplan/<slug>/runs/<run-id>, also after a rerun resets runplan/<slug> (real bin).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { records, runplan, withPlan } from './support.js';

async function completed(f: Parameters<Parameters<typeof withPlan>[2]>[0]): Promise<{ runId: string; resultCommit: string }> {
  const terminal = (await records(f.repo, 'single')).filter((r) => r.terminal === true);
  assert.is(terminal[0]?.type, 'run-complete');
  const data = terminal[0]!.data as { logicalRunId: string; resultCommit: string };
  return { runId: data.logicalRunId, resultCommit: data.resultCommit };
}

test(
  'each complete run keeps its result under refs/runplan/<slug>/runs/<run-id>; a rerun from a moved base does not make it unreachable',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const r1 = await runplan(['run', f.plan], f);
    assert.is(r1.exitCode, 0, r1.stderr);
    const first = await completed(f);
    assert.is(f.repo.git(['rev-parse', `refs/runplan/single/runs/${first.runId}`]), first.resultCommit);

    f.repo.commitFiles({ 'later.txt': 'the base moved\n' });
    const r2 = await runplan(['run', f.plan, '--fresh'], f);
    assert.is(r2.exitCode, 0, r2.stderr);
    const second = await completed(f);
    assert.is.not(second.runId, first.runId);
    assert.is.not(second.resultCommit, first.resultCommit);
    assert.is(f.repo.head('runplan/single'), second.resultCommit);
    assert.equal(
      f.repo.git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/runplan/single/runs/']).split('\n').sort(),
      [
        `refs/runplan/single/runs/${first.runId} ${first.resultCommit}`,
        `refs/runplan/single/runs/${second.runId} ${second.resultCommit}`,
      ].sort(),
    );
  }),
);

test.run();
