import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import { capture, exitCodeFor, realProc, stream, type SettleEvent, type SettleSpec } from '../src/index.js';
import { alive, killQuietly, pidsIn, reaped, sh, taggedAlive } from './support.js';

test(
  'a child that ignores SIGTERM settles at deadline + grace, escalated to KILL',
  withTimeout(30_000, async () => {
    const events: string[] = [];
    const r = await capture({
      argv: [sh('ignore-term.sh')],
      deadlineMs: 300,
      graceMs: 300,
      onEvent: (e: SettleEvent) => events.push(e.type),
    });
    const [pid] = pidsIn(r.stdout);
    killQuietly(pid);
    assert.is(r.reason, 'timed_out');
    assert.is(r.signal, 'SIGKILL');
    assert.is(r.teardown.result, 'escalated');
    assert.ok(r.teardown.signalled.includes(r.pid!));
    assert.equal(r.teardown.survivors, []);
    assert.ok(r.durationMs >= 600, `took ${r.durationMs}ms, before deadline + grace`);
    assert.is(exitCodeFor(r), 124);
    assert.ok(reaped(r.pid));
    assert.equal(taggedAlive(r.tag), []);
    assert.ok(events.includes('deadline') && events.includes('teardown-started') && events.at(-1) === 'settled');
  }),
);

test(
  'a child that exits 0 on TERM after the deadline is still timed_out',
  withTimeout(30_000, async () => {
    const r = await capture({ argv: [sh('exit0-on-term.sh')], deadlineMs: 300, graceMs: 5000 });
    assert.is(r.reason, 'timed_out');
    assert.is(r.exitCode, 0);
    assert.is(r.teardown.result, 'clean');
    assert.is(exitCodeFor(r), 124);
    assert.ok(reaped(r.pid));
  }),
);

test(
  'a deadline ends a grandchild in the same group even when it carries no tag',
  withTimeout(30_000, async () => {
    const r = await capture({ argv: [sh('group-grandchild.sh')], deadlineMs: 300, graceMs: 1000 });
    const [grandchild] = pidsIn(r.stdout);
    assert.ok(grandchild, 'the fixture printed its grandchild');
    try {
      assert.is(r.reason, 'timed_out');
      assert.ok(r.teardown.signalled.includes(grandchild!), 'the untagged group member was signalled');
      assert.not.ok(alive(grandchild!), 'grandchild dead');
    } finally {
      killQuietly(grandchild);
    }
  }),
);

test(
  'no stdout for stallMs is torn down as stalled (124)',
  withTimeout(30_000, async () => {
    const r = await capture({ argv: [sh('sleeper.sh')], stallMs: 300, graceMs: 300 });
    assert.is(r.reason, 'stalled');
    assert.is(r.signal, 'SIGTERM');
    assert.is(exitCodeFor(r), 124);
    assert.ok(reaped(r.pid));
  }),
);

test(
  'steady output keeps a stall timer from firing',
  withTimeout(30_000, async () => {
    const r = await capture({
      argv: ['sh', '-c', 'for i in 1 2 3 4 5 6; do echo $i; sleep 0.1; done'],
      stallMs: 5000,
    });
    assert.is(r.reason, 'exited');
    assert.is(r.exitCode, 0);
  }),
);

test(
  'a killSignal other than TERM is what the deadline sends first',
  withTimeout(30_000, async () => {
    const r = await capture({ argv: [sh('sleeper.sh')], deadlineMs: 200, killSignal: 'SIGINT', graceMs: 300 });
    assert.is(r.reason, 'timed_out');
    // sh execs sleep, which dies of SIGINT (not ignored: it was started in the foreground)
    assert.ok(r.signal === 'SIGINT' || r.signal === 'SIGKILL');
  }),
);

test(
  'an AbortSignal is the canonical interrupted outcome, with owned teardown',
  withTimeout(30_000, async () => {
    const controller = new AbortController();
    const { execution, state } = await stream(
      { argv: [sh('ignore-term.sh')], graceMs: 300, signal: controller.signal },
      { lines: 0 },
      async (stdout, s) => {
        for await (const _ of stdout) {
          s.lines++;
          controller.abort('SIGTERM');
        }
      },
    );
    assert.is(execution.reason, 'interrupted');
    assert.is(execution.interruptSignal, 'SIGTERM');
    assert.is(exitCodeFor(execution), 143);
    assert.is(execution.teardown.result, 'escalated');
    assert.ok(state && state.lines >= 1);
    assert.ok(reaped(execution.pid));
    assert.equal(taggedAlive(execution.tag), []);
  }),
);

test(
  'an already-aborted signal spawns nothing',
  withTimeout(10_000, async () => {
    const r = await capture({ argv: ['true'], signal: AbortSignal.abort() });
    assert.is(r.reason, 'interrupted');
    assert.is(r.pid, undefined);
    assert.is(exitCodeFor(r), 130);
  }),
);

test(
  'exactly once: late exit after settlement changes nothing and emits one settled event',
  withTimeout(30_000, async () => {
    let settled = 0;
    const r = await capture({
      argv: [sh('exit0-on-term.sh')],
      deadlineMs: 200,
      graceMs: 2000,
      onEvent: (e) => {
        if (e.type === 'settled') settled++;
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.is(settled, 1);
    assert.is(r.reason, 'timed_out');
  }),
);

// Runs sleeper.sh to a deadline, logging events and /proc scans in order; `reuse` makes the
// child's start time read differently once it has been recorded (as a reused pid would).
// In group+tag mode: a cgroup's teardown never scans /proc.
async function deadlineLog(reuse: boolean) {
  const log: string[] = [];
  let child: number | undefined;
  const r = await capture({
    ownership: 'group+tag',
    argv: [sh('sleeper.sh')],
    deadlineMs: 200,
    graceMs: 2000,
    onEvent: (e: SettleEvent) => {
      if (e.type === 'spawned') child = e.pid;
      log.push(e.type);
    },
    proc: {
      listPids: () => (log.push('scan'), realProc.listPids()),
      readStat: (pid) => {
        const stat = realProc.readStat(pid);
        return reuse && stat && child !== undefined && pid === child ? { ...stat, startTime: stat.startTime + 1 } : stat;
      },
    },
  });
  const afterDeadline = log.slice(log.indexOf('deadline'));
  return { r, firstSignal: afterDeadline.indexOf('signalled'), firstScan: afterDeadline.indexOf('scan') };
}

test(
  'at a deadline the verified process group is signalled before any /proc scan',
  withTimeout(30_000, async () => {
    const { r, firstSignal, firstScan } = await deadlineLog(false);
    assert.is(r.reason, 'timed_out');
    assert.is(r.teardown.result, 'clean');
    assert.ok(r.teardown.signalled.includes(r.pid!));
    assert.ok(firstSignal >= 0 && (firstScan < 0 || firstSignal < firstScan), 'signal before scan');
    assert.ok(reaped(r.pid));
  }),
);

test(
  'when grace ends a TERM-ignoring group whose leader is verified gets KILL as a group',
  withTimeout(30_000, async () => {
    const log: string[] = [];
    let child: number | undefined;
    const realKill = process.kill;
    // Observe the signals settle sends (and pass them on).
    process.kill = ((pid: number, signal?: NodeJS.Signals | number) => {
      if (child !== undefined && pid === -child) log.push(`group ${String(signal)}`);
      return realKill.call(process, pid, signal);
    }) as typeof process.kill;
    let r;
    try {
      r = await capture({
        ownership: 'group+tag', // (a cgroup's teardown never scans /proc)
        argv: [sh('ignore-term.sh')],
        deadlineMs: 200,
        graceMs: 300,
        onEvent: (e: SettleEvent) => {
          if (e.type === 'spawned') child = e.pid;
        },
        proc: { listPids: () => (log.push('scan'), realProc.listPids()) },
      });
    } finally {
      process.kill = realKill;
    }
    killQuietly(pidsIn(r.stdout)[0]);
    assert.is(r.reason, 'timed_out');
    assert.is(r.teardown.result, 'escalated');
    const term = log.indexOf('group SIGTERM');
    const kill = log.indexOf('group SIGKILL');
    assert.ok(term >= 0 && kill > term, 'TERM, then KILL, to the group');
    assert.ok(log.slice(term, kill).includes('scan'), 'scans during grace');
    assert.ok(log.slice(kill).includes('scan'), 'and a scan after KILL found the tree gone');
    assert.equal(r.teardown.survivors, []);
    assert.ok(reaped(r.pid));
  }),
);

test(
  'a group leader whose start time no longer matches is not signalled as a group',
  withTimeout(30_000, async () => {
    const { r, firstSignal, firstScan } = await deadlineLog(true);
    killQuietly(r.pid);
    assert.is(r.reason, 'timed_out');
    assert.ok(firstScan >= 0 && firstSignal > firstScan, 'no group signal: the scan came first');
  }),
);

test(
  'deadlineMs: 0 and stallMs: 0 mean none, as on the CLI',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: ['sh', '-c', 'sleep 0.3; exit 3'], deadlineMs: 0, stallMs: 0 });
    assert.is(r.reason, 'exited');
    assert.is(r.exitCode, 3);
    assert.is(r.deadlineMs, undefined);
    assert.is(r.stallMs, undefined);
  }),
);

test(
  'a deadline, stall and grace of 2^31 ms (past setTimeout’s limit) do not fire early',
  withTimeout(20_000, async () => {
    const events: string[] = [];
    const r = await capture({
      argv: ['sh', '-c', 'sleep 0.3; exit 3'],
      deadlineMs: 2 ** 31,
      stallMs: 2 ** 31,
      graceMs: 2 ** 31,
      onEvent: (e) => events.push(e.type),
    });
    assert.is(r.reason, 'exited', events.join(' '));
    assert.is(r.exitCode, 3);
    assert.is(r.deadlineMs, 2 ** 31);
    assert.not.ok(events.includes('deadline') || events.includes('stall'), events.join(' '));
  }),
);

test(
  'a deadlineMs, graceMs, killAfterMs or stallMs that is not a number of ms >= 0 is refused before spawning (spawn_failed, where spec)',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      for (const key of ['deadlineMs', 'graceMs', 'killAfterMs', 'stallMs'] as const) {
        for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, '100']) {
          const spec = { argv: ['touch', marker], [key]: value } as unknown as SettleSpec;
          const r = await capture(spec);
          assert.is(r.reason, 'spawn_failed', `${key} ${String(value)}`);
          assert.is(r.error?.where, 'spec');
          assert.match(r.error?.message ?? '', key);
          assert.is(r.pid, undefined);
          assert.is(exitCodeFor(r), 125);
        }
      }
      assert.not.ok(existsSync(marker), 'a refused spec spawned its command');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a killSignal Node cannot send (SIGOTHER, sigterm, 200) is refused before spawning (spawn_failed, where spec)',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      for (const value of ['SIGOTHER', 'sigterm', 'TERM', 200, '']) {
        const r = await capture({ argv: ['touch', marker], deadlineMs: 100, killSignal: value } as unknown as SettleSpec);
        assert.is(r.reason, 'spawn_failed', String(value));
        assert.is(r.error?.where, 'spec');
        assert.match(r.error?.message ?? '', 'killSignal');
        assert.is(exitCodeFor(r), 125);
      }
      assert.not.ok(existsSync(marker), 'a refused spec spawned its command');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'killAfterMs alone sets the wait between the first signal and KILL (graceMs still bounds the pipes)',
  withTimeout(30_000, async () => {
    const r = await capture({ argv: [sh('ignore-term.sh')], deadlineMs: 100, graceMs: 20_000, killAfterMs: 100 });
    assert.is(r.reason, 'timed_out');
    assert.is(r.teardown.result, 'escalated');
    assert.ok(r.durationMs < 10_000, `settled in ${r.durationMs}ms, not after the 20s grace`);
    assert.is(r.graceMs, 20_000);
  }),
);

test.run();
