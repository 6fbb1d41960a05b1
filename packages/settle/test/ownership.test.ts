import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitUntil, withTimeout } from '@runplan/test-fixtures';
import type { PipeHolders } from '../src/index.js';
import {
  capture,
  findTagged,
  newOwnerTag,
  readProcStat,
  realProc,
  stream,
  tagVariable,
  teardownByTag,
  teardownTagged,
} from '../src/index.js';
import { alive, killQuietly, pidsIn, reaped, settleBin, sh, taggedAlive } from './support.js';

const modes = ['cgroup', 'group+tag'] as const;

// Registers a test once per ownership mode: as root, `auto` would always be a cgroup and
// the group + tag rules would go untested.
function inBothModes(name: string, body: (ownership: (typeof modes)[number]) => () => Promise<void>): void {
  for (const ownership of modes) test(`[${ownership}] ${name}`, body(ownership));
}

inBothModes('exit 0 while a setsid grandchild holds stdout: returns, grandchild dead, held pipe reported', (ownership) =>
  withTimeout(30_000, async () => {
    const r = await capture({ ownership, argv: [sh('setsid-holds-stdout.sh')], graceMs: 500 });
    const [grandchild] = pidsIn(r.stdout);
    try {
      assert.ok(grandchild, 'the fixture printed its grandchild');
      assert.is(r.ownership, ownership, 'owned the way the test asked');
      assert.is(r.reason, 'exited');
      assert.is(r.exitCode, 0);
      assert.ok(r.teardown.heldPipe, 'held pipe reported');
      assert.is(r.teardown.result, 'clean');
      assert.ok(r.teardown.signalled.includes(grandchild!));
      assert.not.ok(alive(grandchild!), 'grandchild dead');
      assert.ok(reaped(r.pid));
    } finally {
      killQuietly(grandchild);
    }
  }),
);

inBothModes('the held-pipe event names the grandchild holding stdout, found in the same walk as the ownership scan', (ownership) =>
  withTimeout(30_000, async () => {
    const held: PipeHolders[] = [];
    let fdWalksOfOlderProcesses = 0;
    let childStart = 0;
    // (The child lingers a moment so that its end of the pipe is seen right after the spawn:
    // of a child that is gone by then, the holders are 'unknown'.)
    const r = await capture({
      ownership,
      argv: ['sh', '-c', `sleep 0.2; exec ${sh('setsid-holds-stdout.sh')}`],
      graceMs: 300,
      onEvent: (e) => {
        if (e.type === 'spawned') childStart = readProcStat(e.pid)?.startTime ?? 0;
        if (e.type === 'held-pipe') held.push(e.holders);
      },
      proc: {
        readFdTargets: (pid) => {
          const stat = readProcStat(pid); // (a process gone by now tells nothing)
          if (stat && stat.startTime < childStart) fdWalksOfOlderProcesses++;
          return realProc.readFdTargets(pid);
        },
      },
    });
    const [grandchild] = pidsIn(r.stdout);
    try {
      assert.ok(grandchild);
      assert.equal(held, [[grandchild!]], 'one held-pipe event naming the holder');
      assert.ok(r.teardown.heldPipe);
      assert.ok(r.teardown.signalled.includes(grandchild!));
      assert.not.ok(alive(grandchild!));
      assert.is(
        fdWalksOfOlderProcesses,
        0,
        'a holder was found among the younger processes, so no walk over every process was needed to name it',
      );
    } finally {
      killQuietly(grandchild);
    }
  }),
);

inBothModes('the child’s pipe ends unread (it closed them before settle looked): holders "unknown", not every owned pid', (ownership) =>
  withTimeout(30_000, async () => {
    const held: PipeHolders[] = [];
    // Two leftovers: a setsid grandchild holding stdout, and a group member that holds no
    // pipe. Reading the child's fds is made to fail, as when it exits before settle looks.
    const r = await capture({
      ownership,
      argv: ['sh', '-c', `${sh('setsid-holds-stdout.sh')}; sleep 600 >/dev/null 2>&1 </dev/null & echo "$!"; exit 0`],
      graceMs: 300,
      onEvent: (e) => {
        if (e.type === 'held-pipe') held.push(e.holders);
      },
      proc: { readFdTarget: () => undefined }, // (asked only for the child's ends, at the spawn)
    });
    const [holder, bystander] = pidsIn(r.stdout);
    try {
      assert.ok(holder && bystander, 'the command printed both pids');
      assert.equal(held, ['unknown'], 'one held-pipe event, holders unknown');
      assert.ok(r.teardown.heldPipe);
      assert.ok(r.teardown.signalled.includes(bystander!), 'the bystander is still torn down');
      assert.not.ok(alive(holder!));
      assert.not.ok(alive(bystander!));
    } finally {
      killQuietly(holder);
      killQuietly(bystander);
    }
  }),
);

inBothModes(
  'a signalled process whose environ can no longer be read (exiting, or its tag overwritten) still counts until it is gone',
  (ownership) =>
    withTimeout(30_000, async () => {
      // The setsid grandchild ignores TERM and is owned by its tag only. Once it has been
      // signalled its environ reads as nothing, as while a process exits or after it wrote
      // over its environment (setproctitle): it is still the process we found.
      const termed = new Set<number>();
      const r = await capture({
        ownership,
        argv: [sh('setsid-holds-stdout.sh'), 'ignore-term'],
        graceMs: 300,
        onEvent: (e) => {
          if (e.type === 'signalled' && e.signal === 'SIGTERM') termed.add(e.pid);
        },
        proc: { readEnviron: (pid) => (termed.has(pid) ? undefined : realProc.readEnviron(pid)) },
      });
      const [grandchild] = pidsIn(r.stdout);
      try {
        assert.ok(grandchild);
        assert.ok(termed.has(grandchild!), 'TERM reached it through its tag');
        assert.is(r.teardown.result, 'escalated', 'not "clean" while it lives');
        assert.not.ok(alive(grandchild!), 'KILLed');
      } finally {
        killQuietly(grandchild);
      }
    }),
);

// group+tag only: in a cgroup every member is owned whatever its start time.
test(
  'a pipe holder older than the child (as one handed the fd would be) is still found through every process’s fds',
  withTimeout(30_000, async () => {
    let grandchild: number | undefined;
    const held: PipeHolders[] = [];
    // The grandchild is made to look older than the child, so the ownership walk skips it:
    // only the walk over every process's fds can find it, and settle does not own it. (The
    // child lingers a moment so that its end of the pipe is seen right after the spawn.)
    const { execution } = await stream(
      {
        ownership: 'group+tag',
        argv: ['sh', '-c', `sleep 0.2; exec ${sh('setsid-holds-stdout.sh')}`],
        graceMs: 300,
        onEvent: (e) => {
          if (e.type === 'held-pipe') held.push(e.holders);
        },
        proc: {
          readStat: (pid) => {
            const stat = realProc.readStat(pid);
            return stat && pid === grandchild ? { ...stat, startTime: 0 } : stat;
          },
        },
      },
      null,
      async (stdout) => {
        for await (const chunk of stdout) grandchild ??= pidsIn(chunk as Buffer)[0];
      },
    );
    try {
      assert.ok(grandchild);
      assert.is(execution.reason, 'exited');
      assert.equal(held, [[grandchild!]], 'named as the holder');
      assert.ok(execution.teardown.heldPipe, 'the pipe was abandoned as held');
      assert.is(execution.teardown.result, 'none', 'not owned, so not signalled');
      assert.ok(alive(grandchild!), 'and left alone');
    } finally {
      killQuietly(grandchild);
    }
  }),
);

inBothModes('the same with a TERM-ignoring setsid grandchild: escalated to KILL', (ownership) =>
  withTimeout(30_000, async () => {
    const r = await capture({ ownership, argv: [sh('setsid-holds-stdout.sh'), 'ignore-term'], graceMs: 300 });
    const [grandchild] = pidsIn(r.stdout);
    try {
      assert.ok(r.teardown.heldPipe);
      assert.is(r.teardown.result, 'escalated');
      assert.not.ok(alive(grandchild!));
      assert.equal(taggedAlive(r.tag), []);
    } finally {
      killQuietly(grandchild);
    }
  }),
);

inBothModes('a double-forking daemon that ignores TERM does not outlive the run', (ownership) =>
  withTimeout(30_000, async () => {
    const r = await capture({ ownership, argv: [sh('double-fork-daemon.sh')], graceMs: 300 });
    const [daemon] = pidsIn(r.stdout);
    try {
      assert.ok(daemon, 'the daemon printed its pid');
      assert.is(r.reason, 'exited');
      assert.is(r.exitCode, 0);
      assert.is(r.teardown.result, 'escalated');
      assert.ok(r.teardown.signalled.includes(daemon!));
      assert.not.ok(alive(daemon!), 'daemon dead');
    } finally {
      killQuietly(daemon);
    }
  }),
);

inBothModes('an orphan left a zombie (PID 1 in containers often never reaps) counts as dead', (ownership) =>
  withTimeout(30_000, async () => {
    // `sleep 0` exits at once and its parent (exec'd into `sleep 600`) never reaps it; once
    // the parent is killed the zombie belongs to PID 1, which here may never reap it either.
    const r = await capture({ ownership, argv: ['sh', '-c', 'sleep 0 & echo $!; exec sleep 600'], deadlineMs: 500, graceMs: 300 });
    const [zombie] = pidsIn(r.stdout);
    assert.ok(zombie);
    assert.is(r.reason, 'timed_out');
    assert.is(r.teardown.result, 'clean', 'the zombie was neither waited for nor escalated against');
    assert.equal(r.teardown.survivors, []);
    assert.not.ok(r.teardown.signalled.includes(zombie!));
    assert.not.ok(alive(zombie!));
  }),
);

// Starts the orphan-tree fixture carrying `tag` outside any settle call and returns the orphan's pid.
async function orphanCarrying(tag: string): Promise<number> {
  return orphanWith({ [tagVariable(tag)]: '1' });
}

// The orphan-tree fixture with extra environment variables; the orphan's pid.
async function orphanWith(extra: Record<string, string>): Promise<number> {
  const parent = spawn(sh('orphan-tree.sh'), [], {
    env: { ...process.env, ...extra },
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  let out = '';
  parent.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await once(parent, 'close');
  const [orphan] = pidsIn(out);
  if (!orphan) throw new Error('orphan-tree.sh printed no pid');
  return orphan;
}

test(
  'teardownByTag ends an orphaned TERM-ignoring tree whose parent is gone',
  withTimeout(30_000, async () => {
    const tag = newOwnerTag();
    const orphan = await orphanCarrying(tag);
    try {
      assert.ok(alive(orphan));
      assert.is(readProcStat(orphan)?.ppid === process.pid, false, 'the orphan is not our child');
      const report = await teardownByTag(tag, { graceMs: 300 });
      assert.is(report.result, 'escalated');
      assert.ok(report.signalled.includes(orphan));
      assert.equal(report.survivors, []);
      assert.not.ok(alive(orphan));
      assert.equal(taggedAlive(tag), []);
      assert.is((await teardownByTag(tag, { graceMs: 300 })).result, 'none');
    } finally {
      killQuietly(orphan);
    }
  }),
);

test(
  'a tag prefix finds and ends every process whose tag starts with it, and nothing else (another prefix, a value that looks like one)',
  withTimeout(30_000, async () => {
    const prefix = `r20261129T075500Z_${process.pid.toString(16)}_`;
    const first = newOwnerTag(prefix);
    const second = newOwnerTag(prefix);
    assert.ok(first.startsWith(prefix) && second.startsWith(prefix) && first !== second);
    const mine = [await orphanCarrying(first), await orphanCarrying(second)];
    // Not ours: a tag whose prefix differs in its last character, and a VALUE that names the prefix.
    const others = [
      await orphanCarrying(newOwnerTag(`${prefix.slice(0, -1)}x`)),
      await orphanWith({ NOT_A_TAG: `${tagVariable(prefix)}zz=1`, [`X${tagVariable(prefix)}zz`]: '1' }),
    ];
    try {
      const found = findTagged({ prefixes: [prefix] }).map((p) => p.pid);
      for (const pid of mine) assert.ok(found.includes(pid), `found ${pid} by its tag's prefix`);
      for (const pid of others) assert.not.ok(found.includes(pid), `${pid} does not carry the prefix`);
      const report = await teardownTagged({ prefixes: [prefix] }, { graceMs: 300 });
      assert.is(report.result, 'escalated', 'the orphans ignore TERM');
      for (const pid of mine) assert.not.ok(alive(pid), `${pid} ended`);
      for (const pid of others) assert.ok(alive(pid), `${pid} untouched`);
      assert.not.ok(report.signalled.some((pid) => others.includes(pid)));
      assert.equal(findTagged({ prefixes: [prefix] }), []);
      assert.is((await teardownTagged({ prefixes: [prefix] }, { graceMs: 100 })).result, 'none');
    } finally {
      for (const pid of [...mine, ...others]) killQuietly(pid);
    }
  }),
);

test('newOwnerTag(prefix): a tag that starts with the prefix and fits the tag shape even at the longest prefix; a bad prefix or query throws', () => {
  const longest = 'p'.repeat(31);
  for (let i = 0; i < 100; i++) assert.match(newOwnerTag(longest), /^p{31}[A-Za-z0-9_]{1,33}$/);
  assert.throws(() => newOwnerTag('p'.repeat(32)), /not a tag prefix/);
  assert.throws(() => newOwnerTag('run-1'), /not a tag prefix/);
  assert.throws(() => findTagged({ prefixes: [''] }), /not an owner tag or tag prefix/);
  assert.throws(() => findTagged({ tags: ['a=b'] }), /not an owner tag or tag prefix/);
});

test(
  'a tagged process caught mid-exec (its environment reads empty for a moment) is still found',
  withTimeout(30_000, async () => {
    const tag = newOwnerTag();
    const orphan = await orphanCarrying(tag);
    try {
      // What /proc shows between exec's new memory and its new environment: nothing.
      let environReads = 0;
      const midExec = (pid: number) => (pid === orphan && environReads++ < 3 ? Buffer.alloc(0) : realProc.readEnviron(pid));
      const found = findTagged({ tags: [tag] }, { proc: { readEnviron: midExec } }).map((p) => p.pid);
      assert.ok(found.includes(orphan), `found ${found.join(' ')}, not the orphan ${orphan}`);
      assert.ok(environReads >= 4, 'read again until it showed its environment');
      // On a loaded host each read again can come late: three that take 3 ms each outlast the
      // 5 ms window, and the process must still be found.
      let slowReads = 0;
      const slow = (pid: number) => {
        if (pid !== orphan || slowReads++ >= 3) return realProc.readEnviron(pid);
        const until = Date.now() + 3;
        while (Date.now() < until);
        return Buffer.alloc(0);
      };
      const late = findTagged({ tags: [tag] }, { proc: { readEnviron: slow } }).map((p) => p.pid);
      assert.ok(late.includes(orphan), `late wake-ups: found ${late.join(' ')}, not the orphan ${orphan}`);
      // A process whose environment stays empty carries no tag, and the scan moves on.
      const empty = (pid: number) => (pid === orphan ? Buffer.alloc(0) : realProc.readEnviron(pid));
      assert.not.ok(findTagged({ tags: [tag] }, { proc: { readEnviron: empty } }).some((p) => p.pid === orphan));
    } finally {
      await teardownByTag(tag, { graceMs: 100 });
      killQuietly(orphan);
    }
  }),
);

test(
  'teardown never signals a pid whose start time no longer matches',
  withTimeout(30_000, async () => {
    const tag = newOwnerTag();
    const orphan = await orphanCarrying(tag);
    try {
      // After teardown first finds the orphan, its pid "is reused": a new start time, no tag.
      let statReads = 0;
      let environReads = 0;
      const report = await teardownByTag(tag, {
        graceMs: 300,
        proc: {
          readStat: (pid) => {
            const stat = realProc.readStat(pid);
            if (pid !== orphan || !stat) return stat;
            return statReads++ === 0 ? stat : { ...stat, startTime: stat.startTime + 1 };
          },
          readEnviron: (pid) => (pid === orphan && environReads++ > 0 ? Buffer.alloc(0) : realProc.readEnviron(pid)),
        },
      });
      assert.ok(statReads >= 2, 'teardown re-read the start time before signalling');
      assert.not.ok(report.signalled.includes(orphan), 'the reused pid was not signalled');
      assert.ok(alive(orphan), 'and the process it names is untouched');
    } finally {
      await teardownByTag(tag, { graceMs: 100 });
      killQuietly(orphan);
    }
  }),
);

inBothModes('an ownerTag travels with the child so teardownByTag can end what a settle call left', (ownership) =>
  withTimeout(30_000, async () => {
    const ownerTag = newOwnerTag();
    const controller = new AbortController();
    let spawned: (pid: number) => void = () => {};
    const started = new Promise<number>((resolve) => {
      spawned = resolve;
    });
    const running = capture({
      ownership,
      argv: [sh('sleeper.sh')],
      ownerTag,
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'spawned') spawned(e.pid);
      },
    });
    // The coordinator "crashes": something else ends the attempt by its tag.
    const child = await started;
    // Looked for until seen: a process caught between exec's point of no return (when spawn()
    // returns) and the kernel setting up its new environment reads as having none for a moment.
    const pid = await waitUntil('the child carries its tag', () => taggedAlive(ownerTag).find((p) => p === child), { timeoutMs: 10_000 });
    const report = await teardownByTag(ownerTag, { graceMs: 1000 });
    const r = await running;
    killQuietly(pid);
    assert.ok(pid !== undefined);
    assert.is(report.result, 'clean');
    assert.is(r.reason, 'signaled');
    assert.is(r.ownerTag, ownerTag);
  }),
);

inBothModes('settle nested in settle: the outer interruption reaches the innermost TERM-ignoring command', (ownership) =>
  withTimeout(40_000, async () => {
    const controller = new AbortController();
    // The inner settle would wait a minute before KILL; only the outer tag can end the innermost in time.
    const { execution, state } = await stream(
      {
        ownership,
        argv: [process.execPath, settleBin, '--ownership', ownership, '--grace', '60s', '--', sh('ignore-term.sh')],
        graceMs: 500,
        signal: controller.signal,
      },
      { innermost: 0 },
      async (stdout, s) => {
        for await (const chunk of stdout) {
          const [pid] = pidsIn(chunk as Buffer);
          if (pid) {
            s.innermost = pid;
            controller.abort();
          }
        }
      },
    );
    const innermost = state?.innermost ?? 0;
    try {
      assert.ok(innermost > 0, 'the innermost command started');
      assert.is(execution.reason, 'interrupted');
      assert.ok(execution.teardown.signalled.includes(innermost), 'the outer teardown found the innermost by its tag');
      assert.is(execution.teardown.result, 'escalated');
      assert.not.ok(alive(innermost));
      assert.equal(taggedAlive(execution.tag), []);
    } finally {
      killQuietly(innermost);
    }
  }),
);

inBothModes('nesting adds a tag, never overwrites the outer one', (ownership) =>
  withTimeout(30_000, async () => {
    const r = await capture({
      ownership,
      argv: [process.execPath, settleBin, '--ownership', ownership, '--', sh('print-tag-env.sh')],
      ownerTag: 'outer_attempt',
    });
    const names = r.stdout.toString().trim().split('\n');
    assert.ok(names.includes(tagVariable(r.tag)), 'outer per-call tag kept');
    assert.ok(names.includes(tagVariable('outer_attempt')), 'outer owner tag kept');
    assert.is(names.length, 3, 'plus the inner settle’s own');
  }),
);

test.run();
