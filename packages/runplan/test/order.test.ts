// A run's place in its slug's history is its start order, never its name: runs started in
// the same second (their ids differ only in a random suffix) are still told apart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseJsonLines, readLedger, runBin, tempDir, withTimeout } from '@runplan/test-fixtures';
import { openWriter } from '@runplan/journal';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listRunIds, slugPaths } from '../src/index.js';
import { RUNPLAN, runIds, runplan, withPlan } from './support.js';

interface Started {
  logicalRunId: string;
  continues: string | null;
}

// The run-started record a `run --json` printed: which run this invocation actually started.
function startedBy(stdout: string): Started {
  const record = parseJsonLines(stdout).find((r) => (r as { type?: string }).type === 'run-started') as { data: Started } | undefined;
  if (record === undefined) throw new Error(`no run-started in:\n${stdout}`);
  return record.data;
}

test(
  '20 back-to-back runs of one slug (fail, --retry, --fresh, stop, continue): status names the run that started last, and each continuation continues it',
  withPlan('repeat-fail', { timeoutMs: 300_000 }, async (f) => {
    const names: string[] = [];
    let previous: Started | undefined;
    // Checks what one run did against the one before it, and what status says after it.
    const check = async (step: string, stdout: string, continues: boolean): Promise<void> => {
      const started = startedBy(stdout);
      const at = `run ${names.length + 1} (${step})`;
      assert.is(started.continues, continues ? previous!.logicalRunId : null, `${at} continues the run that started before it`);
      const status = await runplan(['status', 'repeat-fail', '--json'], f);
      assert.is(status.exitCode, 0, status.stderr);
      const row = JSON.parse(status.stdout.trim());
      assert.is(row.runId, started.logicalRunId, `${at}: status names it`);
      assert.is(row.state, 'failed', `${at}: status says how it ended`);
      assert.is(runIds(f.repo, 'repeat-fail').at(-1), started.logicalRunId, `${at}: the test helpers' newest run`);
      names.push(started.logicalRunId);
      previous = started;
    };

    const first = await runplan(['run', f.plan, '--json'], f);
    assert.is(first.exitCode, 1, first.stderr);
    await check('first', first.stdout, false);
    while (names.length < 20) {
      const retried = await runplan(['run', f.plan, '--retry', 'broken', '--json'], f);
      assert.is(retried.exitCode, 1, retried.stderr);
      await check('--retry', retried.stdout, true);

      const fresh = await runplan(['run', f.plan, '--fresh', '--json'], f);
      assert.is(fresh.exitCode, 1, fresh.stderr);
      await check('--fresh', fresh.stdout, false);

      // Held in its first attempt, then stopped: an interrupted run a plain `run` continues.
      const dispatched = readLedger(f.ledger).length;
      const env = { ...f.env, MOCK_HOLD: 'broken', MOCK_HOLD_SECONDS: '120' };
      const held = runBin(RUNPLAN, ['run', f.plan, '--retry', 'broken', '--json'], { env, timeoutMs: 120_000 });
      const until = Date.now() + 60_000;
      // The agent writes its ledger line first thing: another process's file, so polled.
      while (readLedger(f.ledger).length === dispatched) {
        if (Date.now() > until) throw new Error('the held run dispatched nothing within 60 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      const stop = await runplan(['stop', 'repeat-fail', '--wait', '60s'], f);
      assert.is(stop.exitCode, 0, stop.stderr);
      const stopped = await held;
      assert.is(stopped.exitCode, 143, stopped.stderr);
      await check('stopped', stopped.stdout, true);

      const resumed = await runplan(['run', f.plan, '--json'], f);
      assert.is(resumed.exitCode, 1, resumed.stderr);
      await check('after stop', resumed.stdout, true);
    }
    assert.is(new Set(names).size, names.length, 'every run is a new logical run');
    assert.equal(
      runIds(f.repo, 'repeat-fail'),
      names.slice(0, runIds(f.repo, 'repeat-fail').length),
      'the slug lists them in the order they started',
    );
  }),
);

test(
  'a slug holding journals without a start order (older runplan) and with one orders them: old ones first by creation, then by start order; names never decide',
  withTimeout(30_000, async () => {
    const dir = tempDir('runplan-order-');
    try {
      const slug = slugPaths(dir.path, 'mixed');
      // Created in this order; their names sort in the opposite order.
      const made = [
        { runId: '20261201T000000Z-ffff' },
        { runId: '20261201T000000Z-0000' },
        { runId: '20261130T000000Z-bbbb', startOrder: 1 },
        { runId: '20261130T000000Z-aaaa', startOrder: 2 },
      ];
      for (const { runId, startOrder } of made) {
        mkdirSync(join(slug.dir, runId), { recursive: true });
        const opened = await openWriter(join(slug.dir, runId, 'journal.jsonl'), {
          create: true,
          runId,
          ...(startOrder !== undefined ? { headerFields: { startOrder } } : {}),
        });
        if (!opened.ok) throw new Error(opened.error.message);
        await opened.value.close();
        // Header timestamps have ms precision: the next one is made in a later millisecond.
        const at = Date.now();
        while (Date.now() === at) await new Promise((r) => setImmediate(r));
      }
      assert.equal(
        await listRunIds(slug),
        made.map((m) => m.runId),
      );
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'runplan status orders the runs it reads once by their headers, as listRuns does: the newest by start order is the row, a broken header sorts first, names never decide',
  withTimeout(30_000, async () => {
    const dir = tempDir('runplan-order-status-');
    try {
      const slug = slugPaths(dir.path, 'mixed');
      // Names sort the opposite way to the start order; the run with the broken header has the
      // name that sorts last, so only the header can put it first.
      const made = [
        { runId: '20261130T000000Z-cccc', startOrder: 1 },
        { runId: '20261130T000000Z-bbbb', startOrder: 2 },
        { runId: '20261130T000000Z-aaaa', startOrder: 3 },
      ];
      for (const { runId, startOrder } of made) {
        mkdirSync(join(slug.dir, runId), { recursive: true });
        const opened = await openWriter(join(slug.dir, runId, 'journal.jsonl'), { create: true, runId, headerFields: { startOrder } });
        if (!opened.ok) throw new Error(opened.error.message);
        await opened.value.close();
      }
      const broken = '20261231T000000Z-ffff';
      mkdirSync(join(slug.dir, broken), { recursive: true });
      writeFileSync(join(slug.dir, broken, 'journal.jsonl'), 'not a journal line\n');
      assert.equal(await listRunIds(slug), [broken, ...made.map((m) => m.runId)], 'listRuns: the broken header first');
      const status = await runBin(RUNPLAN, ['status', 'mixed', '--state-dir', dir.path, '--json'], { cwd: dir.path, timeoutMs: 20_000 });
      assert.is(status.exitCode, 0, status.stderr);
      const row = JSON.parse(status.stdout.trim()) as { runId: string; runs: number };
      assert.is(row.runId, '20261130T000000Z-aaaa', 'the row is the run with the highest start order');
      assert.is(row.runs, 4);
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
