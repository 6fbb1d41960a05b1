import { existsSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writePlan } from '@runplan/test-fixtures';
import { runplan, withPlan } from './support.js';

test(
  'runplan log: every logical run of the slug, oldest first, with outcome, tasks, attempts and journal; --json; 1 for no such slug',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    assert.is((await runplan(['run', f.plan], f)).exitCode, 0);
    assert.is((await runplan(['run', f.plan, '--fresh'], f)).exitCode, 0);
    const json = await runplan(['log', 'single', '--json', '--repo', f.repo.path], f);
    assert.is(json.exitCode, 0, json.stderr);
    const rows = json.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            runId: string;
            outcome: string;
            tasksDone: number;
            tasksTotal: number;
            attempts: number;
            journal: string;
            startedAt: string;
          },
      );
    assert.is(rows.length, 2);
    for (const r of rows) {
      assert.is(r.outcome, 'complete');
      assert.is(r.tasksDone, r.tasksTotal);
      assert.ok(r.attempts >= 1);
      assert.ok(existsSync(r.journal), r.journal);
    }
    assert.ok(rows[0]!.startedAt <= rows[1]!.startedAt, 'oldest first');
    const table = await runplan(['log', '--repo', f.repo.path], f);
    assert.is(table.exitCode, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0]!, /^SLUG\s+RUN\s+STARTED\s+DURATION\s+OUTCOME/);
    assert.is(lines.length, 3);
    assert.ok(lines[1]!.includes(rows[0]!.runId) && lines[2]!.includes(rows[1]!.runId));
    const none = await runplan(['log', 'nope', '--repo', f.repo.path], f);
    assert.is(none.exitCode, 1);
    assert.match(none.stderr, /no_such_slug/);
  }),
);

test(
  'runplan log with no slug: the runs of every slug oldest first by run start, not grouped by slug',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const alpha = writePlan(f.repo.path, 'single', { 'slug = "single"': 'slug = "alpha"' }, { as: 'alpha.toml' });
    assert.is((await runplan(['run', f.plan], f)).exitCode, 0);
    assert.is((await runplan(['run', alpha], f)).exitCode, 0);
    assert.is((await runplan(['run', f.plan, '--fresh'], f)).exitCode, 0);
    const json = await runplan(['log', '--json', '--repo', f.repo.path], f);
    assert.is(json.exitCode, 0, json.stderr);
    const rows = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { slug: string; startedAt: string });
    assert.equal(
      rows.map((r) => r.slug),
      ['single', 'alpha', 'single'],
      'in the order they ran',
    );
    const starts = rows.map((r) => r.startedAt);
    assert.equal(starts, [...starts].sort(), 'oldest first');
    const table = await runplan(['log', '--repo', f.repo.path], f);
    assert.equal(
      table.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/\s+/)[0]),
      ['single', 'alpha', 'single'],
    );
  }),
);

test.run();
