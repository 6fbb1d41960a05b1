// A run whose coordinator died between creating its journal and journaling run-started:
// closed as never started, and the next `runplan run` proceeds; anything else without a
// run-started still refuses.
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts, readLedger, runBin, withTimeout } from '@runplan/test-fixtures';
import { openWriter, readJournal } from '@runplan/journal';
import { journalPath, ofType, RUNPLAN, runIds, runplan, setup, slugDir, waitForLine, withPlan } from './support.js';

type Fixture = ReturnType<typeof setup>;

// Runs the plan with the coordinator SIGKILLed once the new journal holds only its header.
// Returns the new run's id (ids made in the same second do not sort by time).
async function crashBeforeRunStarted(f: Fixture): Promise<string> {
  const before = runIds(f.repo, 'chain');
  const r = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:journal-header' } });
  assert.is(r.signal, 'SIGKILL', r.stderr);
  const created = runIds(f.repo, 'chain').filter((id) => !before.includes(id));
  assert.is(created.length, 1);
  return created[0]!;
}

// `runplan run PLAN`, and the id of the run it created (undefined if none).
async function runNew(
  f: Fixture,
  env: Record<string, string> = f.env,
): Promise<{ r: Awaited<ReturnType<typeof runplan>>; id: string | undefined }> {
  const before = runIds(f.repo, 'chain');
  const r = await runplan(['run', f.plan], { env });
  return { r, id: runIds(f.repo, 'chain').find((id) => !before.includes(id)) };
}

// The records of one run of the chain slug.
async function recordsOf(f: Fixture, runId: string | undefined) {
  assert.ok(runId, 'a new run');
  return (await readJournal(journalOf(f, runId!))).records;
}

// The journal of one run of the chain slug.
function journalOf(f: Fixture, runId: string): string {
  return join(slugDir(f.repo, 'chain'), runId, 'journal.jsonl');
}

// The run ran to completion: both tasks checkpointed once each, landed on main.
async function assertCompleted(f: Fixture, runId: string | undefined): Promise<void> {
  const rs = await recordsOf(f, runId);
  assert.is(rs.at(-1)!.type, 'run-complete');
  assert.equal(
    ofType(rs, 'checkpoint').map((c) => c.taskId),
    ['a', 'b'],
  );
  assert.ok(f.repo.fileAt('main', 'out/b.txt'), 'landed');
}

test(
  'the crash state: the journal holds only its header, nothing was dispatched',
  withPlan('chain', { timeoutMs: 60_000 }, async (f) => {
    const id = await crashBeforeRunStarted(f);
    const { records: rs, status } = await readJournal(journalOf(f, id));
    assert.is(status.kind, 'clean');
    assert.equal(
      rs.map((r) => r.type),
      ['journal-header'],
    );
    assert.is((rs[0]!.data as { runId: string }).runId, id);
    assert.is(readLedger(f.ledger).length, 0, 'no agent ran');
  }),
);

test(
  'crash before run-started, then run: exit 0, every task done, stderr names the never-started run, status not degraded',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const id = await crashBeforeRunStarted(f);
    const { r, id: next } = await runNew(f);
    assert.is(r.exitCode, 0, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l.includes('never_started'));
    assert.equal(lines, [`runplan: never_started: run ${id} was created but never started (crash before run-started); closing it`]);
    await assertCompleted(f, next);
    assert.equal([...dispatchCounts(f.ledger).values()], [1, 1]);

    // The never-started run got the receipt --fresh gives an abandoned run, reason never_started.
    const closed = (await readJournal(journalOf(f, id))).records;
    assert.equal(
      closed.map((x) => x.type),
      ['journal-header', 'run-failed'],
    );
    assert.is(closed[1]!.terminal, true);
    assert.is((closed[1]!.data as { class: string }).class, 'abandoned');
    assert.is((closed[1]!.data as { reason: string }).reason, 'never_started');
    const started = ofType(await recordsOf(f, next), 'run-started')[0]!;
    assert.equal(started.abandoned, [`${id} (never started)`]);
    assert.is(started.continues, null);

    const status = await runplan(['status', '--json'], f);
    assert.is(status.exitCode, 0);
    const row = JSON.parse(status.stdout.trim());
    // Not 'complete' exactly: status shows the newest run id, and two ids minted in the same
    // second order by their random suffix, so the closed run can be the one it shows.
    assert.ok(row.state === 'complete' || (row.state === 'failed' && row.failedClass === 'abandoned'), row.state);
    assert.is(row.runs, 2);
    assert.not.match(status.stderr, /degraded/);
  }),
);

test(
  'a torn run-started line after the header: repaired (journaled), closed as never started, the run proceeds',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const id = await crashBeforeRunStarted(f);
    appendFileSync(journalOf(f, id), '0badc0de {"seq":1,"prev":"');
    const { r, id: next } = await runNew(f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`never_started: run ${id} was created but never started`));
    assert.equal(
      (await readJournal(journalOf(f, id))).records.map((x) => x.type),
      ['journal-header', 'journal-repaired', 'run-failed'],
    );
    await assertCompleted(f, next);
  }),
);

test(
  'a journal with no whole record (zero bytes, or a torn header): nothing written into it, its directory moved aside, the run proceeds',
  withTimeout(120_000, async () => {
    for (const tear of ['empty', 'torn header'] as const) {
      const f = setup('chain');
      try {
        const id = await crashBeforeRunStarted(f);
        const journal = journalOf(f, id);
        const header = readFileSync(journal);
        if (tear === 'empty') truncateSync(journal, 0);
        else writeFileSync(journal, header.subarray(0, 30));
        const kept = readFileSync(journal);
        const { r, id: next } = await runNew(f);
        assert.is(r.exitCode, 0, `${tear}: ${r.stderr}`);
        assert.match(
          r.stderr,
          new RegExp(`never_started: run ${id} was created but never started .*moved aside to .*${id}\\.never-started-\\d{8}T\\d{6}Z`),
        );
        const aside = readdirSync(slugDir(f.repo, 'chain')).find((n) => n.startsWith(`${id}.never-started-`));
        assert.ok(aside, `${tear}: moved aside`);
        assert.ok(readFileSync(join(slugDir(f.repo, 'chain'), aside!, 'journal.jsonl')).equals(kept), `${tear}: the journal is untouched`);
        assert.not.ok(existsSync(join(slugDir(f.repo, 'chain'), id)));
        await assertCompleted(f, next);
        assert.match(ofType(await recordsOf(f, next), 'run-started')[0]!.abandoned[0], /never started; its journal held no whole record/);
      } finally {
        f.cleanup();
      }
    }
  }),
);

test(
  '--fresh closes a never-started run the same way (an empty journal no longer stops it)',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const id = await crashBeforeRunStarted(f);
    truncateSync(journalOf(f, id), 0);
    const before = runIds(f.repo, 'chain');
    const r = await runplan(['run', f.plan, '--fresh'], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`never_started: run ${id} was created but never started`));
    await assertCompleted(
      f,
      runIds(f.repo, 'chain').find((x) => !before.includes(x)),
    );
  }),
);

test(
  'run-started failing to append (exit 5) leaves a header-only run: the next run closes it and proceeds',
  withPlan('chain', { timeoutMs: 120_000 }, async (f) => {
    const failed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'journal-error:run-started' } });
    assert.is(failed.exitCode, 5, failed.stderr);
    const id = runIds(f.repo, 'chain')[0]!;
    const { r, id: next } = await runNew(f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`never_started: run ${id} `));
    await assertCompleted(f, next);
  }),
);

test(
  'never-started continuations do not hide the failed run: after a stop, two crashes before run-started, the next run still continues it',
  withPlan('chain', { timeoutMs: 180_000, env: { MOCK_HOLD: 'b', MOCK_HOLD_SECONDS: '100' } }, async (f) => {
    const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000 });
    await waitForLine(f.ledger, (l) => l.startsWith('b '));
    const stop = await runplan(['stop', 'chain'], f);
    assert.is(stop.exitCode, 0, stop.stderr);
    assert.is((await running).exitCode, 143);
    const stopped = runIds(f.repo, 'chain')[0]!;
    const env = { ...f.env, MOCK_HOLD: '' };
    const first = await crashBeforeRunStarted({ ...f, env });
    // The second crash closes the first never-started run on its way, then dies itself.
    const second = await crashBeforeRunStarted({ ...f, env });
    assert.is.not(first, second);
    const { r, id: next } = await runNew(f, env);
    assert.is(r.exitCode, 0, r.stderr);
    const rs = await recordsOf(f, next);
    const started = ofType(rs, 'run-started')[0]!;
    assert.is(started.continues, stopped, 'continues the stopped run');
    assert.equal(started.abandoned, [`${second} (never started)`]);
    assert.is((await recordsOf(f, first)).at(-1)!.type, 'run-failed');
    assert.equal(
      ofType(rs, 'checkpoint-adopted').map((c) => c.taskId),
      ['a'],
    );
    assert.is(dispatchCounts(f.ledger).get('a'), 1, 'a was adopted, not redispatched');
  }),
);

test(
  'a header plus another record but no run-started still refuses: exit 3, run_unreadable naming seq and offset, nothing written',
  withPlan('chain', { timeoutMs: 60_000 }, async (f) => {
    const id = await crashBeforeRunStarted(f);
    const journal = journalOf(f, id);
    const writer = await openWriter(journal, { create: false });
    assert.ok(writer.ok);
    if (writer.ok) {
      await writer.value.append('note', { text: 'not run-started' });
      await writer.value.close();
    }
    const before = readFileSync(journal);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `run_unreadable: run ${id} has no run-started record \\(seq 1, a note record at offset ${before.indexOf('\n') + 1}, comes before it\\)`,
      ),
    );
    assert.match(r.stderr, /hint: .*--fresh/);
    assert.not.match(r.stderr, /never_started/);
    assert.ok(readFileSync(journal).equals(before), 'the journal is untouched');
    assert.is(readLedger(f.ledger).length, 0, 'nothing dispatched');
  }),
);

test(
  'a header naming another run still refuses (exit 3)',
  withPlan('chain', { timeoutMs: 60_000 }, async (f) => {
    const id = await crashBeforeRunStarted(f);
    const journal = journalOf(f, id);
    const other = join(slugDir(f.repo, 'chain'), 'other.jsonl');
    const writer = await openWriter(other, { create: true, runId: '20000101T000000Z-abcd' });
    assert.ok(writer.ok);
    if (writer.ok) await writer.value.close();
    writeFileSync(journal, readFileSync(other));
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, new RegExp(`run_unreadable: run ${id} has no run-started record:`));
    assert.is(readLedger(f.ledger).length, 0);
  }),
);

test(
  'a corrupt header still refuses: exit 3, journal_corrupt at offset 0, nothing written or dispatched',
  withPlan('chain', { timeoutMs: 60_000 }, async (f) => {
    const id = await crashBeforeRunStarted(f);
    const journal = journalOf(f, id);
    writeFileSync(journal, readFileSync(journal, 'utf8').replace('"salt":"', '"salt":"0'));
    const before = readFileSync(journal);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, new RegExp(`journal_corrupt: the journal of run ${id} is corrupt at offset 0 \\(seq 0\\): crc_mismatch`));
    assert.not.match(r.stderr, /never_started/);
    assert.ok(readFileSync(journal).equals(before));
    assert.is(readLedger(f.ledger).length, 0);
    assert.ok(existsSync(journalPath(f.repo, 'chain')));
  }),
);

test(
  'a started run whose journal is gone or is not a file (a directory, a dangling or looping symlink) is corrupt: run refuses (exit 3), status says so; --fresh sets it aside',
  withPlan('chain', { timeoutMs: 180_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:checkpoint:a' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [id] = runIds(f.repo, 'chain');
    const journal = journalOf(f, id!);
    const branch = f.repo.head('runplan/chain');
    const before = dispatchCounts(f.ledger);
    const runDirs = () => readdirSync(slugDir(f.repo, 'chain')).filter((n) => /^\d{8}T\d{6}Z-/.test(n));
    for (const [what, make] of [
      ['missing', () => {}],
      ['a directory', () => mkdirSync(journal)],
      ['a dangling symlink', () => symlinkSync(join(f.repo.path, 'nowhere'), journal)],
      ['a looping symlink', () => symlinkSync(journal, journal)],
    ] as const) {
      rmSync(journal, { recursive: true, force: true });
      make();
      // Passed over, it was a slug with no runs: a new run started from the base (exit 0) and
      // moved runplan/chain off the crashed run's checkpoint of a.
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 3, `${what}: ${r.stderr}`);
      assert.match(r.stderr, `runplan: journal_corrupt: the journal of run ${id} is corrupt at offset 0`);
      assert.match(r.stderr, `hint: runplan run ${f.plan} --fresh`);
      assert.equal(runDirs(), [id], `${what}: no new run`);
      assert.equal(dispatchCounts(f.ledger), before, `${what}: nothing dispatched`);
      assert.is(f.repo.head('runplan/chain'), branch, `${what}: the branch stays on the checkpoint`);
      const status = await runplan(['status', 'chain'], f);
      assert.is(status.exitCode, 0, status.stderr);
      assert.match(status.stdout, /corrupt/);
    }
    rmSync(journal, { force: true });
    const fresh = await runplan(['run', f.plan, '--fresh'], f);
    assert.is(fresh.exitCode, 0, fresh.stderr);
    assert.ok(
      runDirs().some((n) => n.startsWith(`${id}.corrupt-`)),
      'the run dir is set aside',
    );
    // A file named like a run id is no run: not corrupt, nothing refused.
    writeFileSync(join(slugDir(f.repo, 'chain'), '20200101T000000Z-00000000'), 'not a run\n');
    const status = await runplan(['status', 'chain'], f);
    assert.not.match(status.stdout + status.stderr, /corrupt/);
    const again = await runplan(['run', f.plan], f);
    assert.is(again.exitCode, 0, again.stderr);
  }),
);

test.run();
