// A closed terminal (SIGHUP) ends `runplan run` as SIGTERM does: attempts torn down, one
// receipt (interrupted, signal SIGHUP), exit 129, and the same command resumes the run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin, withTimeout } from '@runplan/test-fixtures';
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

test.run();
