// A continuation whose coordinator died after its run-started and before every
// checkpoint-adopted was durable: its resume adopts the rest, so no checkpointed task of the
// run it continues is dispatched again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts } from '@runplan/test-fixtures';
import { mockPlan, ofType, records, runIds, runplan, withPlan } from './support.js';

const task = (id: string, needs: string[]) => `[[tasks]]
id = "${id}"
${needs.length > 0 ? `needs = [${needs.map((n) => `"${n}"`).join(', ')}]` : ''}
prompt = """
mock: write out/${id}.txt ${id}
"""
`;
const CHAIN = mockPlan({ slug: 'cont', top: ['land = "main"'], tasks: task('a', []) + task('b', ['a']) + task('c', ['b']) });

for (const point of ['run-started', 'checkpoint-adopted:a']) {
  test(
    `a continuation killed after ${point}: its resume adopts the rest of a and b's checkpoints and dispatches only c`,
    withPlan(CHAIN, {}, async (f) => {
      const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:attempt-started:c' } });
      assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
      const stop = await runplan(['stop', 'cont'], f);
      assert.is(stop.exitCode, 0, stop.stderr);
      const again = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: `kill-after:${point}` } });
      assert.is(again.signal, 'SIGKILL', again.stderr);
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      const counts = dispatchCounts(f.ledger);
      assert.equal(
        [counts.get('a'), counts.get('b'), counts.get('c')],
        [1, 1, 1],
        'a and b, checkpointed in the first run, are never dispatched again',
      );
      const ids = runIds(f.repo, 'cont');
      assert.is(ids.length, 2);
      const rs = await records(f.repo, 'cont');
      assert.equal(
        ofType(rs, 'checkpoint-adopted').map((d) => [d.taskId, d.origin]),
        [
          ['a', ids[0]],
          ['b', ids[0]],
        ],
      );
      assert.equal(
        ofType(rs, 'attempt-started').map((d) => d.taskId),
        ['c'],
      );
      assert.is(rs.at(-1)!.type, 'run-complete');
      assert.is(f.repo.fileAt('main', 'out/c.txt'), 'c\n');
    }),
  );
}

test(
  'a continuation killed after run-started, then closed by runplan stop: the next continuation adopts the first run checkpoints through it',
  withPlan(CHAIN, {}, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:attempt-started:c' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    assert.is((await runplan(['stop', 'cont'], f)).exitCode, 0);
    const again = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:run-started' } });
    assert.is(again.signal, 'SIGKILL', again.stderr);
    assert.is((await runplan(['stop', 'cont'], f)).exitCode, 0);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const counts = dispatchCounts(f.ledger);
    assert.equal(
      [counts.get('a'), counts.get('b'), counts.get('c')],
      [1, 1, 1],
      'a and b, checkpointed in the first run, are never dispatched again',
    );
    const ids = runIds(f.repo, 'cont');
    assert.is(ids.length, 3);
    const rs = await records(f.repo, 'cont');
    assert.equal(
      ofType(rs, 'checkpoint-adopted').map((d) => [d.taskId, d.origin, d.checkpoint.logicalRunId]),
      [
        ['a', ids[1], ids[0]],
        ['b', ids[1], ids[0]],
      ],
    );
    assert.is(rs.at(-1)!.type, 'run-complete');
  }),
);

test.run();
