// A run that died before run-started is closed also when the plan is up to date: the next
// plain `runplan run` finds nothing to do, and still closes it (stderr names it), so status
// no longer shows it as an incomplete run nothing would ever end.
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts } from '@runplan/test-fixtures';
import { readJournal } from '@runplan/journal';
import { runIds, runplan, slugDir, withPlan } from './support.js';

test(
  'complete, then a crash before run-started (--new-run), then run: up to date, exit 0, the never-started run closed; dry-run showed it would be',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const first = await runplan(['run', f.plan], f);
    assert.is(first.exitCode, 0, first.stderr);
    const before = runIds(f.repo, 'chain');
    const crashed = await runplan(['run', f.plan, '--new-run'], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:journal-header' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const id = runIds(f.repo, 'chain').find((x) => !before.includes(x));
    assert.ok(id, 'the crash left a run');

    const dry = await runplan(['run', f.plan, '--dry-run', '--json'], f);
    assert.is(dry.exitCode, 0, dry.stderr);
    const steps = dry.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; run?: string });
    assert.is(steps[0]!.action, 'up_to_date');
    assert.ok(
      steps.some((s) => s.action === 'abandon' && s.run === id),
      dry.stdout,
    );
    const journal = join(slugDir(f.repo, 'chain'), id!, 'journal.jsonl');
    assert.equal(
      (await readJournal(journal)).records.map((r) => r.type),
      ['journal-header'],
      'the dry run wrote nothing',
    );

    const again = await runplan(['run', f.plan], f);
    assert.is(again.exitCode, 0, again.stderr);
    assert.match(again.stderr, /up to date/);
    assert.ok(
      again.stderr.includes(`runplan: never_started: run ${id} was created but never started (crash before run-started); closing it`),
      again.stderr,
    );
    const closed = (await readJournal(journal)).records;
    assert.equal(
      closed.map((r) => r.type),
      ['journal-header', 'run-failed'],
    );
    assert.is((closed[1]!.data as { reason: string }).reason, 'never_started');
    assert.equal([...dispatchCounts(f.ledger).values()], [1, 1], 'nothing ran again');
    assert.equal(runIds(f.repo, 'chain').length, before.length + 1, 'up to date made no new run');

    const status = await runplan(['status'], f);
    assert.not.match(status.stdout + status.stderr, /degraded/);
    const stopped = await runplan(['run', f.plan], f);
    assert.is(stopped.exitCode, 0);
    assert.not.match(stopped.stderr, /never_started/, 'closed once');
  }),
);

test.run();
