// Cases from peer test suites, ported to settle: execa's `test/` (terminate/timeout.js,
// terminate/kill-force.js, terminate/cleanup.js, terminate/kill-descendants.js,
// io/max-buffer.js, io/input-option.js, return/early-error.js, return/final-error.js) and
// Go's `src/os/exec/exec_test.go` (TestWaitInterrupt and its neighbours). Each test names the
// case it ports. Where settle deliberately differs, the README's "Peers" section says so and
// the test pins settle's behaviour. GNU timeout's cases are in gnu-timeout.test.ts.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir, waitUntil, withTimeout } from '@runplan/test-fixtures';
import { capture, exitCodeFor, stream, teardownByTag } from '../src/index.js';
import { alive, killQuietly, pidsIn, settleBin, sh, startSettle } from './support.js';

// A command that ignores `sig`, prints its pid and waits until killed.
const ignoring = (sig: string) => ['sh', '-c', `trap '' ${sig}; echo "$$"; while :; do sleep 1; done`];

// execa terminate/timeout.js "timeout kills the subprocess if it times out".
test(
  'a deadline ends the command with the first signal: timed_out, SIGTERM, 124',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: ['sleep', '600'], deadlineMs: 1 });
    assert.is(r.reason, 'timed_out');
    assert.is(r.signal, 'SIGTERM');
    assert.is(exitCodeFor(r), 124);
  }),
);

// execa terminate/timeout.js "timeout does not kill the subprocess if it does not time out",
// "timedOut is false if timeout is undefined" and "timedOut is false if timeout is 0";
// Go TestWaitInterrupt/Wait (no cancellation: wait for the exit).
test(
  'a deadline that does not expire, none at all, or 0 (none): the command exits on its own',
  withTimeout(20_000, async () => {
    for (const deadlineMs of [1e8, undefined, 0]) {
      const r = await capture({ argv: ['sh', '-c', 'sleep 0.05; echo done'], ...(deadlineMs === undefined ? {} : { deadlineMs }) });
      assert.is(r.reason, 'exited', `deadlineMs ${deadlineMs}`);
      assert.is(r.exitCode, 0);
      assert.is(r.stdout.toString(), 'done\n');
      assert.is(r.teardown.result, 'none');
    }
  }),
);

// execa terminate/timeout.js "timeout uses killSignal".
test(
  'the deadline sends killSignal first',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: ['sleep', '600'], deadlineMs: 1, killSignal: 'SIGINT' });
    assert.is(r.reason, 'timed_out');
    assert.is(r.signal, 'SIGINT');
  }),
);

// execa terminate/timeout.js "timeout must not be negative", "timeout must be an integer"
// (false); terminate/kill-force.js "`forceKillAfterDelay` should not be NaN" and "should not be
// negative". (settle takes fractional ms: a duration, not a count.)
test(
  'a negative, NaN or non-number deadlineMs or killAfterMs is refused before spawning',
  withTimeout(20_000, async () => {
    const cases: [string, unknown][] = [
      ['deadlineMs', -1],
      ['deadlineMs', false],
      ['killAfterMs', Number.NaN],
      ['killAfterMs', -1],
      ['killAfterMs', false],
    ];
    for (const [key, value] of cases) {
      const spawned: number[] = [];
      const r = await capture({
        argv: ['true'],
        [key]: value,
        onEvent: (e) => {
          if (e.type === 'spawned') spawned.push(e.pid);
        },
      });
      assert.is(r.reason, 'spawn_failed', `${key} ${String(value)}`);
      assert.is(r.error?.where, 'spec');
      assert.equal(spawned, [], 'nothing spawned');
    }
  }),
);

// execa terminate/kill-force.js "`forceKillAfterDelay: number` should kill after a timeout" and
// "`forceKillAfterDelay` works with the \"timeout\" option".
test(
  'a command that ignores the first signal is killed killAfterMs after it: escalated, SIGKILL',
  withTimeout(20_000, async () => {
    const started = Date.now();
    const r = await capture({ argv: ignoring('TERM'), deadlineMs: 50, killAfterMs: 50, graceMs: 10_000 });
    const [pid] = pidsIn(r.stdout);
    assert.is(r.reason, 'timed_out');
    assert.is(r.signal, 'SIGKILL');
    assert.is(r.teardown.result, 'escalated');
    assert.ok(Date.now() - started < 5_000, 'KILL came after killAfterMs, not graceMs');
    assert.not.ok(alive(pid!));
  }),
);

// execa terminate/kill-force.js "`forceKillAfterDelay: undefined` should kill after a timeout"
// and "`forceKillAfterDelay: true` …" (the default wait before KILL). settle's default is graceMs.
test(
  'without killAfterMs the wait before KILL is graceMs',
  withTimeout(20_000, async () => {
    let termAt = 0;
    let exitAt = 0;
    const r = await capture({
      argv: ignoring('TERM'),
      deadlineMs: 20,
      graceMs: 300,
      onEvent: (e) => {
        if (e.type === 'signalled' && e.signal === 'SIGTERM' && termAt === 0) termAt = Date.now();
        if (e.type === 'exited') exitAt = Date.now();
      },
    });
    assert.is(r.teardown.result, 'escalated');
    assert.is(r.signal, 'SIGKILL');
    assert.ok(termAt > 0 && exitAt - termAt >= 250, `killed ${exitAt - termAt} ms after TERM, about graceMs`);
  }),
);

// execa terminate/kill-force.js "`forceKillAfterDelay` works with the \"cancelSignal\" option";
// Go TestContextCancel (cancelling ends the process) and TestWaitInterrupt/SIGINT-ignored
// (a handled, ignored interrupt is followed by KILL after the wait delay).
test(
  'an abort ends a command that ignores the first signal: interrupted, escalated to KILL',
  withTimeout(20_000, async () => {
    const controller = new AbortController();
    const r = await capture({
      argv: ignoring('INT'),
      killSignal: 'SIGINT',
      killAfterMs: 50,
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'spawned') setTimeout(() => controller.abort(), 50);
      },
    });
    assert.is(r.reason, 'interrupted');
    assert.is(r.signal, 'SIGKILL');
    assert.is(r.teardown.result, 'escalated');
  }),
);

// execa terminate/kill-force.js "kill(\"SIGKILL\") should terminate cleanly" and
// "error.isForcefullyTerminated is false when already terminated": KILL from outside is not
// settle's escalation.
test(
  'a command KILLed from outside is signaled 137, and no escalation of settle’s',
  withTimeout(20_000, async () => {
    const r = await capture({
      argv: [sh('sleeper.sh')],
      onEvent: (e) => {
        if (e.type === 'spawned') setTimeout(() => killQuietly(e.pid), 50);
      },
    });
    assert.is(r.reason, 'signaled');
    assert.is(r.signal, 'SIGKILL');
    assert.is(exitCodeFor(r), 137);
    assert.is(r.teardown.result, 'none');
  }),
);

// execa terminate/kill-force.js "result.isForcefullyTerminated is false on success" and
// "error.isForcefullyTerminated is false on spawn errors"; Go TestWaitInterrupt/SIGINT-handled
// is below.
test(
  'no escalation on success, on a spawn error, or when the command goes on the first signal',
  withTimeout(20_000, async () => {
    const ok = await capture({ argv: ['true'] });
    assert.is(ok.teardown.result, 'none');
    const missing = await capture({ argv: ['/nonexistent/peer-case'] });
    assert.is(missing.reason, 'spawn_failed');
    assert.is(missing.teardown.result, 'none');
    const polite = await capture({ argv: ['sleep', '600'], deadlineMs: 10 });
    assert.is(polite.teardown.result, 'clean');
    assert.is(polite.signal, 'SIGTERM');
  }),
);

// Go TestWaitInterrupt/SIGINT-handled and /SIGQUIT: the command handles the cancellation
// signal and exits with a code of its own; the outcome still says settle ended it.
test(
  'a command that handles the deadline’s signal and exits with its own code is still timed_out',
  withTimeout(20_000, async () => {
    for (const sig of ['INT', 'QUIT'] as const) {
      const r = await capture({ argv: [sh('trap-signal.sh'), sig], deadlineMs: 100, killSignal: `SIG${sig}` });
      assert.is(r.reason, 'timed_out', sig);
      assert.is(r.exitCode, 3, 'the handler’s own code');
      assert.ok(r.stdout.toString().includes(`got ${sig}`));
      assert.is(exitCodeFor(r), 124);
      assert.is(r.teardown.result, 'clean');
    }
  }),
);

// Go TestWaitInterrupt/WaitDelay: nothing of the caller's ends the command; an interrupt from
// someone else that the command handles by exiting 0 is a plain, successful exit.
test(
  'a command that exits 0 on a signal from someone else: exited 0, no transport error',
  withTimeout(20_000, async () => {
    const r = await capture({
      argv: ['sh', '-c', `trap 'exit 0' INT; echo "$$"; while :; do sleep 1 & wait $!; done`],
      onEvent: (e) => {
        if (e.type === 'spawned') setTimeout(() => process.kill(e.pid, 'SIGINT'), 100);
      },
    });
    assert.is(r.reason, 'exited');
    assert.is(r.exitCode, 0);
    assert.is(r.error, undefined);
  }),
);

// Go TestWaitInterrupt/SIGKILL-hang: cancelled with KILL while a grandchild keeps writing to
// the pipe; the call must still return, reporting the child as killed.
test(
  'killSignal SIGKILL at the deadline while a setsid grandchild keeps writing: returns, grandchild ended',
  withTimeout(20_000, async () => {
    const r = await capture({
      argv: ['sh', '-c', `setsid sh -c 'echo "$$"; while :; do echo ok >&2; sleep 0.01; done' & while :; do sleep 1; done`],
      stderr: 'capture',
      deadlineMs: 200,
      killSignal: 'SIGKILL',
      graceMs: 300,
    });
    const [grandchild] = pidsIn(r.stdout);
    try {
      assert.ok(grandchild);
      assert.is(r.reason, 'timed_out');
      assert.is(r.signal, 'SIGKILL');
      assert.ok(r.stderr.toString().startsWith('ok\n'));
      assert.not.ok(alive(grandchild!));
    } finally {
      killQuietly(grandchild);
    }
  }),
);

// Go TestWaitInterrupt/Exit-hang: exit 0 leaving a grandchild writing to the pipe; Wait returns
// after WaitDelay with ErrWaitDelay (output may be incomplete). settle: after grace, heldPipe.
test(
  'exit 0 leaving a grandchild that keeps writing: returns after grace with heldPipe, grandchild ended',
  withTimeout(20_000, async () => {
    const started = Date.now();
    const r = await capture({
      argv: ['sh', '-c', `setsid sh -c 'echo "$$"; while :; do echo ok; sleep 0.01; done' & exit 0`],
      graceMs: 300,
    });
    const [grandchild] = pidsIn(r.stdout);
    try {
      assert.ok(grandchild);
      assert.is(r.reason, 'exited');
      assert.is(r.exitCode, 0);
      assert.ok(r.teardown.heldPipe, 'the analogue of ErrWaitDelay');
      assert.ok(r.teardown.signalled.includes(grandchild!));
      assert.not.ok(alive(grandchild!));
      assert.ok(Date.now() - started < 10_000);
    } finally {
      killQuietly(grandchild);
    }
  }),
);

// execa terminate/kill-descendants.js "killDescendants terminates descendant processes" and
// "… also terminates descendant processes when the subprocess times out"; terminate/cleanup.js
// "detach subprocess" (settle differs: see the README's Peers section).
test(
  'descendants are ended on an abort, at a deadline, and a detached daemon after the exit',
  withTimeout(30_000, async () => {
    const controller = new AbortController();
    const aborted = await capture({
      argv: [sh('group-grandchild.sh')],
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'spawned') setTimeout(() => controller.abort(), 100);
      },
    });
    const timedOut = await capture({ argv: [sh('group-grandchild.sh')], deadlineMs: 100 });
    const daemon = await capture({ argv: [sh('double-fork-daemon.sh')], graceMs: 300 });
    const pids = [aborted, timedOut, daemon].map((r) => pidsIn(r.stdout)[0]);
    try {
      assert.is(aborted.reason, 'interrupted');
      assert.is(timedOut.reason, 'timed_out');
      assert.is(daemon.reason, 'exited');
      for (const pid of pids) {
        assert.ok(pid, 'each fixture printed its descendant');
        assert.not.ok(alive(pid!), `descendant ${pid} ended`);
      }
    } finally {
      for (const pid of pids) killQuietly(pid);
    }
  }),
);

// execa io/max-buffer.js "maxBuffer does not affect stdout if too high", "… stderr if too high",
// "maxBuffer truncates stdout", "maxBuffer truncates stderr".
test(
  'maxBuffer: one byte under keeps all; one byte over keeps maxBuffer bytes and flags it (stdout and stderr)',
  withTimeout(20_000, async () => {
    const maxBuffer = 1000;
    for (const [fd, length] of [
      [1, maxBuffer - 1],
      [2, maxBuffer - 1],
      [1, maxBuffer + 1],
      [2, maxBuffer + 1],
    ] as const) {
      const r = await capture({
        argv: ['sh', '-c', `head -c ${length} /dev/zero | tr '\\0' . >&${fd}`],
        stderr: 'capture',
        maxBuffer,
      });
      const [kept, truncated] = fd === 1 ? [r.stdout, r.stdoutTruncated] : [r.stderr, r.stderrTruncated];
      assert.is(kept.length, Math.min(length, maxBuffer), `fd ${fd}, ${length} bytes`);
      assert.is(kept.toString(), '.'.repeat(Math.min(length, maxBuffer)));
      assert.is(truncated, length > maxBuffer);
      assert.is(r.reason, 'exited');
    }
  }),
);

// execa io/max-buffer.js "maxBuffer terminates stream gracefully, more writes" and "… no more
// writes". settle differs on purpose: it does not end the command at maxBuffer (the rest is
// read and dropped), so the command's own exit code stands.
test(
  'past maxBuffer the command keeps writing and exits with its own code',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: ['sh', '-c', 'head -c 100000 /dev/zero; echo more; exit 4'], maxBuffer: 10 });
    assert.is(r.reason, 'exited');
    assert.is(r.exitCode, 4);
    assert.is(r.stdout.length, 10);
    assert.ok(r.stdoutTruncated);
    assert.is(r.bytesOut, 100_005, 'every byte was read');
  }),
);

// execa io/max-buffer.js "maxBuffer has a default value with stdout" (execa 1e8 characters;
// settle 100 MiB).
test(
  'maxBuffer defaults to 100 MiB',
  withTimeout(60_000, async () => {
    const limit = 100 * 1024 * 1024;
    const r = await capture({ argv: ['head', '-c', String(limit + 1), '/dev/zero'] });
    assert.is(r.stdout.length, limit);
    assert.ok(r.stdoutTruncated);
  }),
);

// execa io/input-option.js "input option can be a String", "… a Uint8Array", "… a Buffer";
// Go TestCatStdin.
test(
  'input as a string, a plain Uint8Array and a Buffer reaches stdin',
  withTimeout(20_000, async () => {
    const inputs = ['foobar', new Uint8Array([102, 111, 111, 98, 97, 114]), Buffer.from('foobar')];
    for (const input of inputs) {
      const r = await capture({ argv: ['cat'], input });
      assert.is(r.stdout.toString(), 'foobar', String(input.constructor.name));
      assert.is(r.bytesIn, 6);
    }
  }),
);

// execa return/early-error.js "execa() rejects if running non-executable" and "… with correct
// error and doesn't throw if running non-executable with input"; "child_process.spawn() early
// errors have correct shape"; Go TestNoExistExecutable.
test(
  'not executable (also with input) and not found: spawn_failed EACCES 126 / ENOENT 127, nothing thrown',
  withTimeout(20_000, async () => {
    const dir = tempDir('settle-peers-');
    try {
      const file = join(dir.path, 'not-executable');
      writeFileSync(file, '#!/bin/sh\necho hi\n');
      chmodSync(file, 0o644);
      for (const input of [undefined, 'Hey!']) {
        const r = await capture({ argv: [file], ...(input === undefined ? {} : { input }) });
        assert.is(r.reason, 'spawn_failed');
        assert.is(r.error?.code, 'EACCES');
        assert.is(exitCodeFor(r), 126);
      }
      const missing = await capture({ argv: [join(dir.path, 'missing')] });
      assert.is(missing.error?.code, 'ENOENT');
      assert.is(exitCodeFor(missing), 127);
      assert.ok(missing.error?.message.includes('missing'));
    } finally {
      dir.cleanup();
    }
  }),
);

// execa return/early-error.js "write to fast-exit subprocess"; Go TestIgnorePipeErrorOnSuccess
// (10MB). settle differs on purpose: an EPIPE is recorded (it is real), but the outcome is the
// command's own exit.
test(
  'a large input to a command that exits without reading: exited 0, at most an EPIPE recorded',
  withTimeout(20_000, async () => {
    const r = await capture({ argv: ['echo', 'foo'], input: Buffer.alloc(10 << 20, 'x') });
    assert.is(r.reason, 'exited');
    assert.is(r.exitCode, 0);
    assert.is(r.stdout.toString(), 'foo\n');
    if (r.error) assert.is(r.error.code, 'EPIPE');
  }),
);

// execa return/final-error.js "error.cause is not set if error.exitCode is not 0", "… if
// error.isTerminated", "… if error.timedOut"; Go TestExitCode (42, 255) and
// TestOutputStderrCapture.
test(
  'a nonzero exit, a signal death and a timeout carry no transport error; exit codes and stderr are the command’s',
  withTimeout(20_000, async () => {
    for (const code of [42, 255]) {
      const r = await capture({ argv: ['sh', '-c', `echo some stderr text >&2; exit ${code}`], stderr: 'capture' });
      assert.is(r.exitCode, code);
      assert.is(r.stderr.toString(), 'some stderr text\n');
      assert.is(r.error, undefined);
    }
    const killed = await capture({ argv: ['sh', '-c', 'kill -KILL $$'] });
    assert.is(killed.reason, 'signaled');
    assert.is(killed.error, undefined);
    const timedOut = await capture({ argv: ['sleep', '600'], deadlineMs: 10 });
    assert.is(timedOut.reason, 'timed_out');
    assert.is(timedOut.error, undefined);
  }),
);

// Go TestContext: the command answers over the pipes, then the caller cancels; Wait fails.
test(
  'stream: the command answers, then an abort ends it while it waits on stdin',
  withTimeout(20_000, async () => {
    const controller = new AbortController();
    const { execution, state } = await stream(
      { argv: ['sh', '-c', 'echo hi; exec cat'], input: 'x', signal: controller.signal },
      { first: '' },
      async (stdout, s) => {
        for await (const chunk of stdout) {
          if (!s.first) {
            s.first = String(chunk);
            controller.abort();
          }
        }
      },
    );
    assert.is(state?.first.startsWith('hi'), true);
    assert.is(execution.reason, 'interrupted');
  }),
);

// execa terminate/cleanup.js "spawnAndKill cleanup SIGTERM": settle killed by TERM ends the
// command's tree (execa needs `cleanup`; settle always does it).
test(
  'bin: settle sent SIGTERM ends the command and its grandchild, exits 143',
  withTimeout(30_000, async () => {
    const live = startSettle(['--grace', '1s', '--', sh('group-grandchild.sh')]);
    const grandchild = Number(await live.firstLine);
    try {
      live.child.kill('SIGTERM');
      const { code } = await live.exit;
      assert.is(code, 143);
      assert.not.ok(alive(grandchild));
    } finally {
      killQuietly(grandchild);
    }
  }),
);

// execa terminate/cleanup.js "spawnAndKill cleanup uses killSignal": the teardown on settle's
// own SIGTERM sends --signal first.
test(
  'bin: settle sent SIGTERM tears the command down with --signal',
  withTimeout(30_000, async () => {
    const child = spawn(process.execPath, [settleBin, '--signal', 'INT', '--', sh('trap-signal.sh'), 'INT'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const pid = Number(await waitUntil('the command’s pid', () => pidsIn(out)[0], { timeoutMs: 10_000 }));
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      child.kill('SIGTERM');
      assert.is(await closed, 143);
      assert.ok(out.includes('got INT'), 'the command got INT, settle’s --signal');
    } finally {
      killQuietly(pid);
    }
  }),
);

// execa terminate/kill-force.js "`forceKillAfterDelay` should not kill after a timeout with
// other signals": a signal that is not a teardown (relayed by settle) is not followed by KILL.
test(
  'bin: a relayed SIGUSR2 is not followed by KILL after grace; the command’s own exit code stands',
  withTimeout(30_000, async () => {
    const live = startSettle([
      '--grace',
      '100ms',
      '--',
      'sh',
      '-c',
      `trap 'sleep 0.5; exit 7' USR2; echo "$$"; while :; do sleep 1 & wait $!; done`,
    ]);
    const pid = Number(await live.firstLine);
    try {
      live.child.kill('SIGUSR2');
      const { code } = await live.exit;
      assert.is(code, 7, 'not 137: no KILL 100ms after the relayed signal');
    } finally {
      killQuietly(pid);
    }
  }),
);

// execa terminate/kill-force.js "`forceKillAfterDelay: number` should kill after a timeout",
// through the bin: `-k` bounds the wait before KILL.
test(
  'bin: --deadline with -k 50ms on a TERM-ignoring command: 124 well before --grace, report escalated',
  withTimeout(30_000, async () => {
    const dir = tempDir('settle-peers-');
    try {
      const report = join(dir.path, 'r.json');
      const started = Date.now();
      const r = await runBin(settleBin, [
        '--deadline',
        '100ms',
        '-k',
        '50ms',
        '--grace',
        '20s',
        '--report',
        report,
        '--',
        sh('ignore-term.sh'),
      ]);
      killQuietly(pidsIn(r.stdout)[0]);
      assert.is(r.exitCode, 124);
      assert.ok(Date.now() - started < 10_000, 'KILL after -k, not --grace');
      assert.is(JSON.parse(readFileSync(report, 'utf8')).teardown.result, 'escalated');
    } finally {
      dir.cleanup();
    }
  }),
);

// execa terminate/kill-force.js "Can call `.kill()` with `forceKillAfterDelay` multiple times":
// a second SIGTERM to settle during its teardown changes nothing.
test(
  'bin: two SIGTERMs to settle during a teardown: one teardown, exit 143, the command ended',
  withTimeout(30_000, async () => {
    const live = startSettle(['--grace', '300ms', '--', sh('ignore-term.sh')]);
    const pid = Number(await live.firstLine);
    try {
      live.child.kill('SIGTERM');
      live.child.kill('SIGTERM');
      const { code, stderr } = await live.exit;
      assert.is(code, 143);
      assert.not.ok(alive(pid));
      assert.ok(stderr.split('\n').filter((l) => l.startsWith('settle: ')).length <= 1, stderr);
    } finally {
      killQuietly(pid);
    }
  }),
);

// execa terminate/cleanup.js "spawnAndKill SIGKILL" and "spawnAndKill cleanup SIGKILL": a
// parent killed with SIGKILL cannot clean up. settle's documented limit (README, Parent death):
// the command keeps running with its tag, and teardownByTag ends it.
test(
  'bin: settle KILLed leaves the command running with its tag; teardownByTag ends it',
  withTimeout(30_000, async () => {
    const live = startSettle(['--', sh('sleeper.sh')]);
    const pid = Number(await live.firstLine);
    try {
      const ours = new Set(Object.keys(process.env));
      const tagVar = readFileSync(`/proc/${pid}/environ`, 'latin1')
        .split('\0')
        .map((entry) => entry.split('=')[0]!)
        .find((name) => name.startsWith('RUNPLAN_OWNER_') && !ours.has(name));
      assert.ok(tagVar, 'the command carries a tag of its own');
      const exited = once(live.child, 'exit'); // (not 'close': the orphan still holds settle's stdout)
      live.child.kill('SIGKILL');
      await exited;
      assert.ok(alive(pid), 'orphaned, still running');
      const report = await teardownByTag(tagVar!.slice('RUNPLAN_OWNER_'.length), { graceMs: 1000 });
      assert.ok(report.signalled.includes(pid));
      assert.not.ok(alive(pid));
    } finally {
      killQuietly(pid);
    }
  }),
);

test.run();
