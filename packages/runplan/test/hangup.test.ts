// A closed terminal (SIGHUP) ends `runplan run` as SIGTERM does: attempts torn down, one
// receipt (interrupted, signal SIGHUP), exit 129, and the same command resumes the run. A
// terminal that hangs up under a run it does not signal leaves the run's own exit code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inHangingTerminal, readLedger, runBin, waitUntil, withTimeout } from '@runplan/test-fixtures';
import { alive, ofType, records, RUNPLAN, runplan, setup, waitForHolding } from './support.js';

const HOLD = { MOCK_HOLD: 'only', MOCK_HOLD_SECONDS: '120' };

test(
  'SIGHUP: the attempt is torn down, one receipt (interrupted, SIGHUP), exit 129; status says failed (interrupted); run again completes it',
  withTimeout(120_000, async () => {
    const f = setup('single', {}, HOLD);
    try {
      let pid = 0;
      const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
      // The agent is running (its first line is in the transcript), so there is one to tear down.
      await waitForHolding(f.repo, 'single', 'only');
      process.kill(pid, 'SIGHUP');
      const r = await running;
      assert.is(r.exitCode, 129, r.stderr);
      assert.match(r.stderr, /interrupted/);
      const agent = readLedger(f.ledger)[0]!;
      assert.not.ok(alive(agent.pid), 'the agent was torn down');
      const rs = await records(f.repo, 'single');
      const terminal = rs.filter((x) => x.terminal === true);
      assert.is(terminal.length, 1);
      assert.is(terminal[0]!.type, 'run-failed');
      assert.is((terminal[0]!.data as Record<string, unknown>).class, 'interrupted');
      assert.is((terminal[0]!.data as Record<string, unknown>).signal, 'SIGHUP');
      assert.is(ofType(rs, 'attempt-closed')[0]!.outcome, 'interrupted');

      const status = await runplan(['status'], f);
      assert.match(status.stdout, /failed \(interrupted\)/);
      const report = await runplan(['report', 'single', '--json'], f);
      assert.is(report.exitCode, 0, report.stderr);
      assert.is(JSON.parse(report.stdout).exitCode, 129);

      const again = await runplan(['run', f.plan], { ...f, env: { ...f.env, MOCK_HOLD: '' } });
      assert.is(again.exitCode, 0, again.stderr);
    } finally {
      for (const { pid } of readLedger(f.ledger)) if (alive(pid)) process.kill(pid, 'SIGKILL');
      f.cleanup();
    }
  }),
);

// One task that waits, after it started, until the test has hung the terminal up ($T: the
// hanging terminal's scratch dir, in the environment runplan passes on).
const HANGUP_PLAN = `slug = "hangup"
base = "main"
[defaults]
format = "text"
deadline = "1m"

[[tasks]]
id = "wait"
command = ["sh", "-c", "touch \\"$T/started\\"; while [ ! -e \\"$T/hung\\" ]; do sleep 0.05; done; touch done.txt"]
`;

const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

test(
  'the terminal hangs up under a run (tmux pane killed): the run completes and exits 0; SIGHUP then interrupts it, 129 with its receipt; never Node’s abort (134)',
  withTimeout(120_000, async () => {
    const f = setup(HANGUP_PLAN);
    try {
      const run = `${quoted(process.execPath)} ${quoted(RUNPLAN)} run ${quoted(f.plan)} --repo ${quoted(f.repo.path)}`;
      // HUP ignored: the run outlives its terminal and exits when its task is done.
      const kept = await inHangingTerminal(`${run} 2>"$T/err"`, f.env);
      try {
        await waitUntil('the task started', () => existsSync(join(kept.dir, 'started')));
        await kept.hangUp();
        writeFileSync(join(kept.dir, 'hung'), '');
        assert.is(await kept.exitStatus(), 0, readFileSync(join(kept.dir, 'err'), 'utf8'));
        assert.not.match(readFileSync(join(kept.dir, 'err'), 'utf8'), /Assertion failed|Native stack trace/);
        assert.is(ofType(await records(f.repo, 'hangup'), 'run-complete').length, 1);
      } finally {
        await kept.cleanup();
      }
      // The SIGHUP a shell sends its jobs when its terminal goes: the run ends as interrupted.
      const ended = await inHangingTerminal(`${run} --fresh 2>"$T/err" & echo $! > "$T/pid"; wait $!`, f.env);
      try {
        await waitUntil('the task started', () => existsSync(join(ended.dir, 'started')));
        await ended.hangUp();
        process.kill(Number(readFileSync(join(ended.dir, 'pid'), 'utf8')), 'SIGHUP');
        assert.is(await ended.exitStatus(), 129, readFileSync(join(ended.dir, 'err'), 'utf8'));
        assert.not.match(readFileSync(join(ended.dir, 'err'), 'utf8'), /Assertion failed|Native stack trace/);
        const receipt = ofType(await records(f.repo, 'hangup'), 'run-failed')[0]!;
        assert.equal([receipt.class, receipt.signal], ['interrupted', 'SIGHUP']);
      } finally {
        await ended.cleanup();
      }
    } finally {
      f.cleanup();
    }
  }),
);

test.run();
