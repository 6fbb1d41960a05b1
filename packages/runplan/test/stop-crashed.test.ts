// `runplan stop` and `status` after a coordinator crash, and `--fresh` over a corrupt journal:
// the crashed run's agents are found by their ownerTags (the run's tag prefix even when the
// journal cannot be read) and ended, and nothing else is touched.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin, tempDir, withTimeout } from '@runplan/test-fixtures';
import { readJournal, REPAIRED_TYPE } from '@runplan/journal';
import { realProc, tagVariable } from '@runplan/settle';
import { stopExitCode } from '../src/cli.js';
import { runTagPrefix } from '../src/resume/leftovers.js';
import { stopSlug } from '../src/observe/stop.js';
import {
  alive,
  journalPath,
  ofType,
  records,
  RUNPLAN,
  runIds,
  runplan,
  setup,
  slugDir,
  waitForHolding,
  waitForLine,
  withPlan,
  type Fixture,
} from './support.js';

const HOLD = { MOCK_HOLD: 'only', MOCK_HOLD_SECONDS: '120' };

// Kills what a test left running: the ledger's agents and any pids it learned.
function killAll(f: Fixture, pids: number[] = []): void {
  for (const pid of [...readLedger(f.ledger).map((e) => e.pid), ...pids]) {
    try {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

// Starts `runplan run`, waits until its agent is running (the ledger line; `ready` when
// given: a file the agent writes once it is where the test wants it), then kill -9s the
// coordinator. Returns the agent's pid (alive, orphaned) and the crashed run's id.
async function crashWhileAgentRuns(f: Fixture, ready?: string): Promise<{ agent: number; runId: string }> {
  let pid = 0;
  const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
  await waitForHolding(f.repo, 'single', 'only');
  if (ready !== undefined) await waitForLine(ready, (l) => l === 'ready');
  process.kill(pid, 'SIGKILL');
  const r = await running;
  assert.is(r.signal, 'SIGKILL', `the coordinator was killed: exit ${r.exitCode} ${r.stderr}`);
  const agent = readLedger(f.ledger)[0]!.pid;
  assert.ok(alive(agent), 'the agent outlived its coordinator');
  return { agent, runId: runIds(f.repo, 'single').at(-1)! };
}

async function statusRow(f: Fixture): Promise<Record<string, any>> {
  const r = await runplan(['status', 'single', '--json'], f);
  assert.is(r.exitCode, 0, r.stderr);
  return JSON.parse(r.stdout.trim()) as Record<string, any>;
}

// Makes the attempt-started line fail its checksum: the journal is corrupt there, so the
// attempt's ownerTag cannot be read back from it.
function corruptAttemptStarted(journal: string): void {
  const lines = readFileSync(journal, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes('"type":"attempt-started"'));
  assert.ok(i > 0, 'the journal has an attempt-started line');
  lines[i] = lines[i]!.replace('"ownerTag"', '"ownerTaX"');
  writeFileSync(journal, lines.join('\n'));
}

test(
  'kill -9 while the agent sleeps: status shows it alive (degraded, leftovers, last seen, elapsed not growing); stop ends it, exit 0, closes the run; the next run continues',
  withPlan('single', { env: HOLD, timeoutMs: 150_000 }, async (f) => {
    const { agent, runId } = await crashWhileAgentRuns(f);
    const runDir = join(slugDir(f.repo, 'single'), runId);
    assert.ok(existsSync(join(runDir, 'disk-reserve')), 'the crashed coordinator left its disk reserve');
    const before = await statusRow(f);
    assert.is(before.state, 'degraded');
    assert.ok(before.leftovers.includes(agent), `status names the agent among the leftovers: ${JSON.stringify(before.leftovers)}`);
    const rs = await records(f.repo, 'single');
    assert.is(before.lastSeen, rs.at(-1)!.ts, 'last seen is the last journal record');
    const started = rs.find((r) => r.type === 'run-started')!.ts;
    assert.is(before.elapsedMs, Date.parse(rs.at(-1)!.ts) - Date.parse(started), 'elapsed runs to the last record');
    const again = await statusRow(f);
    assert.is(again.elapsedMs, before.elapsedMs, 'and does not grow while nobody drives the run');
    const human = await runplan(['status'], f);
    assert.match(human.stdout, /degraded \(\d+ leftovers?\)/);
    assert.ok(human.stderr.includes(`last seen ${new Date(before.lastSeen).toTimeString().slice(0, 8)}`), human.stderr);
    assert.match(human.stderr, new RegExp(`runplan: leftovers: single run ${runId}: \\d+ process\\(es\\) .*\\b${agent}\\b`));
    assert.ok(human.stderr.includes('hint: runplan stop single'), human.stderr);

    const stop = await runplan(['stop', 'single'], f);
    assert.is(stop.exitCode, 0, stop.stderr);
    assert.not.ok(alive(agent), 'stop ended the agent');
    for (const pid of before.leftovers as number[]) assert.not.ok(alive(pid), `leftover ${pid} ended`);
    assert.match(stop.stderr, new RegExp(`stopped_after_crash: run ${runId}: ended \\d+ process\\(es\\) .*\\b${agent}\\b`));
    const receipt = JSON.parse(stop.stdout.trim());
    assert.is(receipt.type, 'run-failed');
    assert.is(receipt.data.class, 'interrupted');
    assert.is(receipt.data.reason, 'stopped_after_crash');
    // The run ended at stop's receipt: its reserve is deleted and its report written, as at every receipt.
    assert.not.ok(existsSync(join(runDir, 'disk-reserve')), 'stop deleted the disk reserve');
    assert.ok(stop.stderr.includes(`  report: ${join(runDir, 'report.html')}`), stop.stderr);
    assert.match(readFileSync(join(runDir, 'report.html'), 'utf8'), /stopped_after_crash/);

    const after = await records(f.repo, 'single');
    const ended = ofType(after, 'leftovers-ended')[0]!;
    assert.ok(ended.signalled.includes(agent));
    assert.equal(ended.survivors, []);
    assert.is(ended.lastSeen, before.lastSeen);
    assert.equal(
      ended.attempts.map((a: { taskId: string }) => a.taskId),
      ['only'],
    );
    const closed = ofType(after, 'attempt-closed');
    assert.is(closed.length, 1);
    assert.is(closed[0]!.reason, 'stopped_after_crash');
    const types = after.map((r) => r.type);
    assert.ok(
      types.indexOf('leftovers-ended') < types.indexOf('attempt-closed') && types.indexOf('attempt-closed') < types.indexOf('run-failed'),
      types.join(' '),
    );

    const row = await statusRow(f);
    assert.is(row.state, 'failed');
    assert.is(row.failedClass, 'interrupted');
    assert.equal(row.leftovers, []);
    assert.equal(row.current, []);
    const nothing = await runplan(['stop', 'single'], f);
    assert.is(nothing.exitCode, 1, nothing.stderr);
    assert.match(nothing.stderr, /not_running: no live coordinator and no incomplete run/);

    const next = await runplan(['run', f.plan], { env: { ...f.env, MOCK_HOLD: '' } });
    assert.is(next.exitCode, 0, next.stderr);
    assert.is(ofType(await records(f.repo, 'single'), 'run-started')[0]!.continues, runId, 'the next run continues the stopped one');
    for (const id of runIds(f.repo, 'single'))
      assert.not.ok(existsSync(join(slugDir(f.repo, 'single'), id, 'disk-reserve')), `no disk reserve left in run ${id}`);
  }),
);

test(
  'stop of a slug with no state exits 1 naming it (no lock taken, nothing created); a read-only state dir: stop exits 1, run refuses naming EROFS',
  withPlan('single', {}, async (f) => {
    assert.is((await runplan(['run', f.plan], f)).exitCode, 0);
    const none = await runplan(['stop', 'nosuch'], f);
    assert.is(none.exitCode, 1, none.stderr);
    assert.match(none.stderr, /^runplan: not_running: no live coordinator and no incomplete run for slug nosuch\n$/);
    assert.not.ok(existsSync(slugDir(f.repo, 'nosuch')), 'stop created nothing');
    const roDir = tempDir('runplan-ro-');
    const ro = join(roDir.path, 'state');
    mkdirSync(ro);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', ro], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const stop = await runplan(['stop', 'single', '--state-dir', ro], f);
      assert.is(stop.exitCode, 1, stop.stderr);
      assert.match(stop.stderr, /not_running: .* slug single/);
      const run = await runplan(['run', f.plan, '--state-dir', ro], f);
      assert.is(run.exitCode, 3, run.stderr);
      assert.ok(run.stderr.includes(`state_unwritable: cannot create ${join(ro, 'single')}: EROFS`), run.stderr);
    } finally {
      execFileSync('umount', ['-l', ro]);
      roDir.cleanup();
    }
  }),
);

test(
  'a slug dir that refuses the lock identity (chattr +i, as root): stop exits 5 naming the write and EPERM, nothing touched',
  withPlan('single', {}, async (f) => {
    assert.is((await runplan(['run', f.plan], f)).exitCode, 0);
    const dir = slugDir(f.repo, 'single');
    const before = readdirSync(dir).sort();
    const journal = readFileSync(journalPath(f.repo, 'single'));
    execFileSync('chattr', ['+i', dir]);
    try {
      const stop = await runplan(['stop', 'single'], f);
      assert.is(stop.exitCode, 5, stop.stderr);
      assert.match(
        stop.stderr,
        /^runplan: \w+: cannot take the lock of slug single: writing the lock identity \S+coordinator\.json failed: EPERM: .*; nothing was touched$/m,
      );
      assert.is(stop.stdout, '');
    } finally {
      execFileSync('chattr', ['-i', dir]);
    }
    assert.equal(readdirSync(dir).sort(), before, 'no lock file or identity left behind');
    assert.ok(readFileSync(journalPath(f.repo, 'single')).equals(journal), 'the journal is untouched');
  }),
);

test(
  'while stop ends TERM-ignoring leftovers it holds the slug: status says stopping, a run exits 4 naming the stop; a torn tail is repaired and the agent found by the run prefix',
  withTimeout(150_000, async () => {
    const scratch = tempDir('runplan-stop-');
    const ready = join(scratch.path, 'ready');
    const f = setup('single', {}, { MOCK_DIRECTIVES: `ignore-term\nwrite ${ready} ready\nsleep 120` });
    let leftovers: number[] = [];
    try {
      const { agent, runId } = await crashWhileAgentRuns(f, ready);
      // The attempt-started line torn: its ownerTag is gone from the journal.
      const journal = journalPath(f.repo, 'single');
      const torn = readFileSync(journal, 'utf8');
      assert.ok(torn.trimEnd().split('\n').at(-1)!.includes('"type":"attempt-started"'), 'attempt-started is the last record');
      truncateSync(journal, statSync(journal).size - 10);
      const degraded = await statusRow(f);
      assert.is(degraded.state, 'degraded');
      assert.ok(degraded.leftovers.includes(agent), `found by the run's tag prefix alone: ${JSON.stringify(degraded.leftovers)}`);

      const stopping = runBin(RUNPLAN, ['stop', 'single', '--grace', '60s'], { env: f.env, cwd: f.repo.path, timeoutMs: 100_000 });
      await waitForLine(join(slugDir(f.repo, 'single'), 'coordinator.json'), (l) => l.includes('"role":"stop"'));
      const row = await statusRow(f);
      assert.is(row.state, 'stopping');
      assert.is(row.coordinator.role, 'stop');
      assert.ok(row.leftovers.includes(agent), 'TERM is ignored: the agent is still alive');
      leftovers = row.leftovers;
      const human = await runplan(['status'], f);
      assert.match(human.stdout, /stopping/);
      assert.match(human.stderr, /runplan: stopping: single run .*runplan stop \(pid \d+\)/);
      const run = await runplan(['run', f.plan], f);
      assert.is(run.exitCode, 4, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(`lock_held: slug single is being stopped by \`runplan stop\`, pid ${row.coordinator.pid} \\(start time`),
      );

      // Within the stop's 60s grace, the test ends them itself: the stop sees them gone.
      for (const pid of leftovers) process.kill(pid, 'SIGKILL');
      const stop = await stopping;
      assert.is(stop.exitCode, 0, stop.stderr);
      assert.match(stop.stderr, new RegExp(`stopped_after_crash: run ${runId}: ended .*\\b${agent}\\b`));
      const rs = await records(f.repo, 'single');
      assert.is(rs.filter((r) => r.type === REPAIRED_TYPE).length, 1, 'the torn tail was repaired, and that journaled');
      assert.ok(ofType(rs, 'leftovers-ended')[0]!.signalled.includes(agent));
      assert.equal(ofType(rs, 'attempt-closed'), [], 'the torn attempt-started left no attempt to close');
      assert.is(ofType(rs, 'run-failed')[0]!.reason, 'stopped_after_crash');
      assert.is((await statusRow(f)).state, 'failed');
    } finally {
      killAll(f, leftovers);
      f.cleanup();
      scratch.cleanup();
    }
  }),
);

test(
  'a corrupt journal: status shows the leftovers, stop ends them by the run prefix and exits 5 naming them (the journal untouched); --fresh then starts clean',
  withTimeout(150_000, async () => {
    const f = setup('single', {}, HOLD);
    try {
      const { agent, runId } = await crashWhileAgentRuns(f);
      const journal = journalPath(f.repo, 'single');
      corruptAttemptStarted(journal);
      const bytes = readFileSync(journal);
      const row = await statusRow(f);
      assert.is(row.state, 'corrupt');
      assert.ok(row.leftovers.includes(agent), `status finds the agent with its tag unreadable: ${JSON.stringify(row.leftovers)}`);
      const stop = await runplan(['stop', 'single'], f);
      assert.is(stop.exitCode, 5, stop.stderr);
      assert.not.ok(alive(agent), 'the agent was ended all the same');
      assert.match(stop.stderr, new RegExp(`stopped_after_crash: run ${runId}: ended .*\\b${agent}\\b`));
      assert.match(stop.stderr, new RegExp(`journal_corrupt: the journal of run ${runId} is corrupt at offset \\d+`));
      assert.is(stop.stdout, '', 'no receipt');
      assert.ok(readFileSync(journal).equals(bytes), 'a corrupt journal is never written');
      assert.equal((await statusRow(f)).leftovers, []);
      const fresh = await runplan(['run', f.plan, '--fresh'], { env: { ...f.env, MOCK_HOLD: '' } });
      assert.is(fresh.exitCode, 0, fresh.stderr);
    } finally {
      killAll(f);
      f.cleanup();
    }
  }),
);

test(
  '--fresh over a corrupt journal ends the orphaned agent by the run prefix and says so',
  withTimeout(150_000, async () => {
    const f = setup('single', {}, HOLD);
    try {
      const { agent, runId } = await crashWhileAgentRuns(f);
      corruptAttemptStarted(journalPath(f.repo, 'single'));
      const fresh = await runplan(['run', f.plan, '--fresh'], { env: { ...f.env, MOCK_HOLD: '' } });
      assert.is(fresh.exitCode, 0, fresh.stderr);
      assert.not.ok(alive(agent), 'the orphaned agent was ended though its tag could not be read');
      assert.match(fresh.stderr, new RegExp(`runplan: leftovers_ended: run ${runId}: ended \\d+ process\\(es\\) .*\\b${agent}\\b`));
      const started = ofType(await records(f.repo, 'single'), 'run-started')[0]!;
      assert.match(started.abandoned[0], /corrupt journal renamed/);
    } finally {
      killAll(f);
      f.cleanup();
    }
  }),
);

test(
  'leftovers that survive SIGKILL: stop names them (exit 3), journals leftovers-ended and leaves the run incomplete',
  withTimeout(90_000, async () => {
    const f = setup('single', {}, { RUNPLAN_FAILPOINT: 'kill-after:attempt-started' });
    try {
      const crashed = await runplan(['run', f.plan], f);
      assert.is(crashed.signal, 'SIGKILL', `exit ${crashed.exitCode}: ${crashed.stderr}`);
      const runId = runIds(f.repo, 'single').at(-1)!;
      // A process that cannot be killed, seen through an injected /proc: a pid above any
      // pid_max (kill(2) can never reach it), carrying a tag with the run's prefix.
      const unkillable = 4_194_304 + 4242;
      const environ = Buffer.from(`PATH=/bin\0${tagVariable(`${runTagPrefix(runId)}x`)}=1\0`, 'latin1');
      const end = await stopSlug(join(f.repo.path, '.git', 'runplan'), 'single', 1000, {
        graceMs: 100,
        proc: {
          listPids: () => [...realProc.listPids(), unkillable],
          readStat: (pid) => (pid === unkillable ? { pid, state: 'S', ppid: 1, pgrp: pid, startTime: 1 } : realProc.readStat(pid)),
          readEnviron: (pid) => (pid === unkillable ? environ : realProc.readEnviron(pid)),
        },
      });
      assert.is(end.kind, 'after_crash');
      if (end.kind !== 'after_crash') return;
      assert.equal(
        end.runs.map((r) => r.survivors),
        [[unkillable]],
      );
      assert.is(end.runs[0]!.receipt, undefined);
      assert.is(stopExitCode(end), 3);
      const rs = (await readJournal(journalPath(f.repo, 'single'))).records;
      assert.is(rs.at(-1)!.type, 'leftovers-ended');
      assert.equal((rs.at(-1)!.data as { survivors: number[] }).survivors, [unkillable]);
      assert.is(rs.filter((r) => r.terminal === true).length, 0, 'no receipt: the run stays incomplete');
      assert.is((await statusRow(f)).state, 'degraded');
    } finally {
      killAll(f);
      f.cleanup();
    }
  }),
);

test.run();
