import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitForPid } from './support.js';
import { isAlive, newOwnerTag, processIdentity, tagVariable } from '@runplan/settle';
import { shFixture, tempDir, withTimeout } from '@runplan/test-fixtures';
import { HOOK_TAIL_BYTES, runHook, type HookEvent } from '../src/index.js';

// The arguments a hook-args.sh run received, from its NUL-separated output.
function receivedArgs(stdoutTail: string): string[] {
  const fields = stdoutTail.split('\0');
  assert.is(fields.pop(), '', 'output ends with a NUL');
  const [count, ...args] = fields;
  assert.is(Number(count), args.length, 'the hook counted what it printed');
  return args;
}

const awkward = [
  'two words',
  `"double" and 'single' quotes`,
  'x; touch INJECTED',
  '$(touch INJECTED)',
  '`touch INJECTED`',
  'first line\nsecond line',
  '*',
  '',
  '--flag=with spaces',
  '\\ back\\slash',
];

test(
  'each argv element stays one argument, whatever it holds',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const workdir = join(dir.path, 'a dir; $(touch INJECTED) `x`');
      const outcome = await runHook([shFixture('hook-args.sh'), ...awkward, '{{harness.workdir}}', 'pre {{run.id}} post'], {
        tier: 'pre_run',
        vars: { 'harness.workdir': workdir, 'run.id': 'r1' },
        cwd: dir.path,
      });
      assert.is(outcome.reason, 'ok', JSON.stringify(outcome));
      assert.equal(receivedArgs(outcome.stdoutTail), [...awkward, workdir, 'pre r1 post']);
      assert.equal(outcome.argv, [shFixture('hook-args.sh'), ...awkward, workdir, 'pre r1 post']);
      assert.not.ok(existsSync(join(dir.path, 'INJECTED')), 'nothing was run through a shell');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'an untrusted event.* variable is refused and nothing is spawned',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      for (const variable of ['event.text', 'event.path']) {
        const events: HookEvent[] = [];
        const outcome = await runHook([shFixture('hook-marker.sh'), marker, `{{${variable}}}`], {
          tier: 'post_run',
          vars: { [variable]: 'hello' },
          onEvent: (e) => events.push(e),
        });
        assert.is(outcome.reason, 'template_refused');
        assert.ok(!outcome.ok && outcome.message.includes(variable), outcome.ok ? '' : outcome.message);
        assert.is(outcome.ok ? undefined : outcome.argv, undefined);
        assert.not.ok(existsSync(marker), `${variable}: the hook was never spawned`);
        assert.equal(
          events.map((e) => e.type),
          ['hook-refused', 'hook-settled'],
        );
      }
      // The control: the same hook without the refused element does run and leave its mark.
      const ran = await runHook([shFixture('hook-marker.sh'), marker], { tier: 'post_run', vars: {} });
      assert.is(ran.reason, 'ok');
      assert.ok(existsSync(marker));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'run.outcome is refused in pre_run and rendered in post_run',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const vars = { 'run.outcome': 'success', 'run.exit_code': 0 };
      const refused = await runHook([shFixture('hook-marker.sh'), marker, '{{run.outcome}}'], { tier: 'pre_run', vars });
      assert.is(refused.reason, 'template_refused');
      assert.not.ok(existsSync(marker));
      const refusedCode = await runHook([shFixture('hook-marker.sh'), marker, '{{run.exit_code}}'], { tier: 'pre_run', vars });
      assert.is(refusedCode.reason, 'template_refused');
      assert.not.ok(existsSync(marker));
      const allowed = await runHook([shFixture('hook-args.sh'), '{{run.outcome}}', 'code={{run.exit_code}}'], { tier: 'post_run', vars });
      assert.is(allowed.reason, 'ok');
      assert.equal(receivedArgs(allowed.stdoutTail), ['success', 'code=0']);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a stale HARNESS_* in the parent environment never reaches a hook; the hook variables come from the vars',
  withTimeout(60_000, async () => {
    const baseEnv = {
      ...process.env,
      HARNESS_RUN_OUTCOME: 'success',
      HARNESS_RUN_ID: 'stale-run',
      HARNESS_RUN_EXIT_CODE: '0',
      HARNESS_SOMETHING_ELSE: 'x',
    };
    const pre = await runHook([shFixture('hook-env.sh')], { tier: 'pre_run', vars: { 'run.id': 'r1' }, baseEnv });
    assert.is(pre.stdoutTail, 'HARNESS_RUN_ID=r1\n');

    const none = await runHook([shFixture('hook-env.sh')], { tier: 'post_run', vars: {}, baseEnv });
    assert.is(none.stdoutTail, '');

    const vars = {
      'harness.name': 'nightly',
      'harness.workdir': '/srv/work/tree',
      'run.datadir': '/srv/work/tree/.harness-run/r2',
      'run.id': 'r2',
      'run.attempt': 3,
      'task.id': 'build',
      'plan.slug': 'nightly',
      'run.outcome': 'failed',
      'run.exit_code': 2,
    };
    const post = await runHook([shFixture('hook-env.sh')], { tier: 'post_run', vars, baseEnv });
    assert.is(
      post.stdoutTail,
      [
        'HARNESS_NAME=nightly',
        'HARNESS_PLAN_SLUG=nightly',
        'HARNESS_RUN_ATTEMPT=3',
        'HARNESS_RUN_DATADIR=/srv/work/tree/.harness-run/r2',
        'HARNESS_RUN_EXIT_CODE=2',
        'HARNESS_RUN_ID=r2',
        'HARNESS_RUN_OUTCOME=failed',
        'HARNESS_TASK_ID=build',
        'HARNESS_WORKDIR=/srv/work/tree',
        '',
      ].join('\n'),
    );
    // pre_run with the same vars: no verdict variables.
    const preAll = await runHook([shFixture('hook-env.sh')], { tier: 'pre_run', vars, baseEnv });
    assert.not.match(preAll.stdoutTail, 'HARNESS_RUN_OUTCOME');
    assert.not.match(preAll.stdoutTail, 'HARNESS_RUN_EXIT_CODE');
    assert.match(preAll.stdoutTail, 'HARNESS_RUN_ID=r2\n');
  }),
);

test(
  'a hook variable the template language refuses is refused even when argv does not name it',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const outcome = await runHook([shFixture('hook-marker.sh'), marker], { tier: 'pre_run', vars: { 'run.id': '../escape' } });
      assert.is(outcome.reason, 'template_refused');
      assert.not.ok(existsSync(marker));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a timeout kills the whole tree, including a TERM-ignoring grandchild, and reports timed_out',
  withTimeout(90_000, async () => {
    const dir = tempDir();
    try {
      const pidFile = join(dir.path, 'grandchild.pid');
      let settled = false;
      const running = runHook([shFixture('hook-tree.sh'), pidFile], { tier: 'post_run', vars: {}, timeoutMs: 4000, graceMs: 300 }).finally(
        () => (settled = true),
      );
      const grandchild = await waitForPid(pidFile, () => settled);
      const outcome = await running;
      assert.ok(grandchild, 'the grandchild started before the deadline');
      assert.is(outcome.reason, 'timed_out');
      assert.ok(!outcome.ok && outcome.teardown, 'the teardown is reported');
      assert.ok(!outcome.ok && outcome.teardown?.result === 'escalated', JSON.stringify(outcome));
      assert.not.ok(isAlive(grandchild!), `grandchild ${grandchild!.pid} is gone (or a zombie)`);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a nonzero exit is an exited outcome with its code and the stream tails as evidence',
  withTimeout(60_000, async () => {
    const outcome = await runHook([shFixture('hook-output.sh'), '3', '7'], { tier: 'pre_run', vars: {} });
    assert.is(outcome.reason, 'exited');
    assert.is(outcome.exitCode, 7);
    assert.is(outcome.stdoutTail, 'out 0\nout 1\nout 2\nno newline at the end');
    assert.is(outcome.stderrTail, 'err 0\nerr 1\nerr 2\n');
    assert.ok(!outcome.ok && outcome.message.includes('exited 7'));
  }),
);

test(
  'stream tails stay bounded however much a hook writes',
  withTimeout(90_000, async () => {
    const outcome = await runHook([shFixture('hook-output.sh'), '20000'], { tier: 'pre_run', vars: {} });
    assert.is(outcome.reason, 'ok');
    assert.ok(Buffer.byteLength(outcome.stdoutTail) <= HOOK_TAIL_BYTES);
    assert.ok(Buffer.byteLength(outcome.stderrTail) <= HOOK_TAIL_BYTES);
    assert.ok(outcome.stdoutTail.endsWith('out 19999\nno newline at the end'));
    assert.ok(outcome.stderrTail.endsWith('err 19998\nerr 19999\n'));
  }),
);

test(
  'a hook that cannot be started is spawn_failed',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const outcome = await runHook([join(dir.path, 'no-such-hook')], { tier: 'pre_run', vars: {} });
      assert.is(outcome.reason, 'spawn_failed');
      assert.is(outcome.ok, false);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a hook killed by a signal is signaled',
  withTimeout(60_000, async () => {
    const outcome = await runHook(['/bin/sh', '-c', 'kill -KILL $$'], { tier: 'pre_run', vars: {} });
    assert.is(outcome.reason, 'signaled');
    assert.is(outcome.ok ? null : outcome.signal, 'SIGKILL');
  }),
);

test(
  'aborting the signal interrupts the hook and tears its tree down',
  withTimeout(90_000, async () => {
    const dir = tempDir();
    try {
      const pidFile = join(dir.path, 'grandchild.pid');
      const controller = new AbortController();
      let settled = false;
      const running = runHook([shFixture('hook-tree.sh'), pidFile], {
        tier: 'pre_run',
        vars: {},
        graceMs: 300,
        signal: controller.signal,
      }).finally(() => (settled = true));
      const grandchild = await waitForPid(pidFile, () => settled);
      controller.abort();
      const outcome = await running;
      assert.is(outcome.reason, 'interrupted');
      assert.ok(grandchild);
      assert.not.ok(isAlive(grandchild!));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'the hook runs in cwd',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const outcome = await runHook(['/bin/pwd'], { tier: 'pre_run', vars: {}, cwd: dir.path });
      assert.is(outcome.stdoutTail, `${dir.path}\n`);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a hook that exits 0 but leaves a process holding its stdout is ok, and the leftover is ended',
  withTimeout(90_000, async () => {
    const dir = tempDir();
    try {
      const pidFile = join(dir.path, 'sleeper.pid');
      const outcome = await runHook([shFixture('hook-leftover.sh'), pidFile], { tier: 'post_run', vars: {}, graceMs: 300 });
      assert.is(outcome.reason, 'ok', JSON.stringify(outcome));
      assert.is(outcome.stdoutTail, 'started\n');
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      assert.is(processIdentity(pid), undefined, `leftover ${pid} is gone (or a zombie)`);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  "the hook carries the caller's owner tag, and its milestones and settle's events are reported in order",
  withTimeout(60_000, async () => {
    const tag = newOwnerTag();
    const events: HookEvent[] = [];
    const outcome = await runHook(['/usr/bin/env'], {
      tier: 'pre_run',
      vars: { 'run.id': 'r1' },
      ownerTag: tag,
      onEvent: (e) => events.push(e),
    });
    assert.is(outcome.reason, 'ok');
    assert.ok(outcome.stdoutTail.split('\n').includes(`${tagVariable(tag)}=1`), 'owner tag in the hook environment');
    const types = events.map((e) => (e.type === 'settle' ? `settle:${e.event.type}` : e.type));
    assert.is(types[0], 'hook-started');
    assert.ok(types.includes('settle:spawned'));
    assert.is(types.at(-1), 'hook-settled');
    const settled = events.at(-1);
    assert.ok(settled?.type === 'hook-settled' && settled.outcome === outcome);
  }),
);

test(
  'an observer that throws changes nothing',
  withTimeout(60_000, async () => {
    const outcome = await runHook([shFixture('hook-output.sh'), '1', '4'], {
      tier: 'pre_run',
      vars: {},
      onEvent: () => {
        throw new Error('observer broke');
      },
    });
    assert.is(outcome.reason, 'exited');
    assert.is(outcome.exitCode, 4);
  }),
);

test.run();
