import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '@runplan/test-fixtures';
import { capture, exitCodeFor, realProc, type Execution, type ProcStat, type SettleEvent } from '../src/index.js';
import { killQuietly, sh } from './support.js';

const base: Execution = {
  reason: 'exited',
  exitCode: 0,
  signal: null,
  pid: 1,
  durationMs: 1,
  graceMs: 5000,
  teardown: { result: 'none', signalled: [], survivors: [], heldPipe: false },
  bytesIn: 0,
  bytesOut: 0,
  tag: 't',
  ownership: 'group+tag',
};
const failed = { result: 'failed' as const, signalled: [9], survivors: [9], heldPipe: false };

test('exitCodeFor follows GNU timeout', () => {
  assert.is(exitCodeFor({ ...base, exitCode: 3 }), 3);
  assert.is(exitCodeFor({ ...base, reason: 'signaled', exitCode: null, signal: 'SIGTERM' }), 143);
  assert.is(exitCodeFor({ ...base, reason: 'timed_out', exitCode: 0 }), 124);
  assert.is(exitCodeFor({ ...base, reason: 'stalled' }), 124);
  assert.is(exitCodeFor({ ...base, reason: 'interrupted', interruptSignal: 'SIGHUP' }), 129);
  assert.is(exitCodeFor({ ...base, reason: 'interrupted' }), 130);
  assert.is(exitCodeFor({ ...base, reason: 'spawn_failed', error: { code: 'ENOENT', where: 'spawn', message: '' } }), 127);
  assert.is(exitCodeFor({ ...base, reason: 'spawn_failed', error: { code: 'EACCES', where: 'spawn', message: '' } }), 126);
  assert.is(exitCodeFor({ ...base, reason: 'spawn_failed', error: { code: 'ENOENT', where: 'cwd', message: '' } }), 125);
  assert.is(exitCodeFor({ ...base, reason: 'timed_out', teardown: failed }), 125, '125 outranks 124');
  assert.is(exitCodeFor({ ...base, exitCode: 0, teardown: failed }), 125, 'an unverified teardown is never success');
});

for (const ownership of ['cgroup', 'group+tag'] as const)
  test(
    `[${ownership}] a process that survives KILL is reported by pid and makes the teardown failed (125)`,
    withTimeout(30_000, async () => {
      // Pretend the child cannot die: /proc keeps showing it alive after KILL.
      let child: number | undefined;
      let lastSeen: ProcStat | undefined;
      const r = await capture({
        ownership,
        argv: [sh('ignore-term.sh')],
        deadlineMs: 200,
        graceMs: 200,
        onEvent: (e: SettleEvent) => {
          if (e.type === 'spawned') child = e.pid;
        },
        proc: {
          listPids: () => [...new Set([...realProc.listPids(), ...(child ? [child] : [])])],
          readStat: (pid) => {
            const stat = realProc.readStat(pid);
            if (pid !== child) return stat;
            if (stat && stat.state !== 'Z') lastSeen = stat;
            return lastSeen;
          },
        },
      });
      killQuietly(child);
      assert.is(r.reason, 'timed_out');
      assert.is(r.ownership, ownership);
      assert.is(r.teardown.result, 'failed');
      assert.equal(r.teardown.survivors, [child!]);
      assert.is(exitCodeFor(r), 125);
    }),
  );

test.run();
