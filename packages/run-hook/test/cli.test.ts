import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitForPid } from './support.js';
import { isAlive, processIdentity, readProcStat } from '@runplan/settle';
import { binPath, inHangingTerminal, parseJsonLines, runBin, shFixture, tempDir, waitUntil, withTimeout } from '@runplan/test-fixtures';

const bin = binPath('run-hook');

// The environment the bin runs with: ours, plus stale hook variables a hook must never see.
const staleEnv = { ...process.env, HARNESS_RUN_OUTCOME: 'success', HARNESS_RUN_ID: 'stale-run', HARNESS_TASK_ID: 'stale-task' };

test(
  'each argv element stays one argument through the bin, and stdout passes through byte-exact',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const elements = [
        'two words',
        `"q" 'q'`,
        'a;touch INJECTED',
        '$(touch INJECTED)',
        'line\nbreak',
        '{{run.id}}/{{run.attempt}}',
        '{{harness.workdir}}',
      ];
      // A path value may hold anything but NUL: it still becomes exactly one argument.
      const workdir = `${dir.path}/a dir; $(touch INJECTED) \`touch INJECTED\` "q"\nx`;
      const vars = ['--var', 'run.id=r1', '--var', 'run.attempt=4', '--var', `harness.workdir=${workdir}`];
      const result = await runBin(bin, [...vars, '--', shFixture('hook-args.sh'), ...elements], {
        cwd: dir.path,
      });
      assert.is(result.exitCode, 0, result.stderr);
      const expected = ['7', ...elements.slice(0, 5), 'r1/4', workdir].map((s) => `${s}\0`).join('');
      assert.is(result.stdout, expected);
      assert.is(result.stderr, '');
      assert.not.ok(existsSync(join(dir.path, 'INJECTED')));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'an untrusted event.* variable is refused with exit 125, one line naming element and variable, and nothing spawned',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const result = await runBin(bin, [
        '--tier',
        'post_run',
        '--var',
        'event.text=hi',
        '--',
        shFixture('hook-marker.sh'),
        marker,
        'x{{ event.text }}',
      ]);
      assert.is(result.exitCode, 125);
      assert.is(result.stdout, '');
      const lines = result.stderr.trimEnd().split('\n');
      assert.is(lines.length, 1, result.stderr);
      assert.match(lines[0]!, /^run-hook: template_refused: /);
      assert.match(lines[0]!, 'event.text');
      assert.match(lines[0]!, /element|argv\[2\]|\b2\b/);
      assert.not.ok(existsSync(marker));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'an unknown or repeated --var (or an unknown name in --vars) is refused with exit 125 and one line naming it; nothing spawned',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const typoVars = join(dir.path, 'vars.json');
      writeFileSync(typoVars, JSON.stringify({ run: { id: 'r1', outcom: 'success' }, 'event.file': '/dev/null' }));
      const hook = ['--', shFixture('hook-marker.sh'), marker];
      const cases: [string[], string][] = [
        // A typo of run.outcome: the hook would run without HARNESS_RUN_OUTCOME.
        [
          ['--tier', 'post_run', '--var', 'run.outcom=success', ...hook],
          'run-hook: unknown_variable: --var run.outcom: not a template variable (known: harness.name, plan.slug, run.id, ',
        ],
        [['--var', 'run.idd=a', ...hook], 'run-hook: unknown_variable: --var run.idd: not a template variable (known: '],
        // The same typo in a --vars file (nested, as the file may give it).
        [
          ['--tier', 'post_run', '--vars', typoVars, ...hook],
          `run-hook: unknown_variable: --vars ${typoVars}: run.outcom: not a template variable (known: `,
        ],
        // Of two values, one would silently win; --vars then --var is the documented override, not a repeat.
        [['--var', 'run.id=a', '--var', 'run.id=b', ...hook], 'run-hook: usage: --var run.id given twice\n'],
      ];
      for (const [args, expected] of cases) {
        const result = await runBin(bin, args);
        assert.is(result.exitCode, 125, `${args.join(' ')}: ${result.stderr}`);
        assert.is(result.stdout, '');
        assert.ok(result.stderr.startsWith(expected), result.stderr);
        assert.match(result.stderr, /run\.outcome, run\.exit_code|given twice/);
        assert.is(result.stderr.split('\n').length, 3, result.stderr);
        assert.match(result.stderr, /\n {2}hint: run-hook --help\n$/);
        assert.not.ok(existsSync(marker), args.join(' '));
      }
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'run.outcome is refused in pre_run (the default tier) and rendered in post_run',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const refused = await runBin(bin, ['--var', 'run.outcome=success', '--', shFixture('hook-marker.sh'), marker, '{{run.outcome}}']);
      assert.is(refused.exitCode, 125);
      assert.match(refused.stderr, /^run-hook: template_refused: .*run\.outcome/);
      assert.not.ok(existsSync(marker));
      const allowed = await runBin(bin, [
        '--tier',
        'post_run',
        '--var',
        'run.outcome=success',
        '--',
        shFixture('hook-args.sh'),
        '{{run.outcome}}',
      ]);
      assert.is(allowed.exitCode, 0, allowed.stderr);
      assert.is(allowed.stdout, '1\0success\0');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'stale HARNESS_* variables of the caller never reach the hook; --vars (nested) and --var set them',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const varsFile = join(dir.path, 'vars.json');
      writeFileSync(varsFile, JSON.stringify({ run: { id: 'from-file', outcome: 'failed', exit_code: 3 }, task: { id: 'build' } }));
      const result = await runBin(bin, ['--tier', 'post_run', '--vars', varsFile, '--var', 'run.id=r7', '--', shFixture('hook-env.sh')], {
        env: staleEnv,
      });
      assert.is(result.exitCode, 0, result.stderr);
      assert.is(result.stdout, 'HARNESS_RUN_EXIT_CODE=3\nHARNESS_RUN_ID=r7\nHARNESS_RUN_OUTCOME=failed\nHARNESS_TASK_ID=build\n');
      const bare = await runBin(bin, ['--', shFixture('hook-env.sh')], { env: staleEnv });
      assert.is(bare.exitCode, 0, bare.stderr);
      assert.is(bare.stdout, '');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  '--cwd, --vars and --var values reach the hook exactly as typed, numeric-looking ones too (0042 is not 42)',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, '0042'));
      mkdirSync(join(dir.path, '42'));
      writeFileSync(join(dir.path, '007'), JSON.stringify({ task: { id: '0100' } }));
      writeFileSync(join(dir.path, '7'), JSON.stringify({ task: { id: 'wrong-file' } }));
      const args = ['--cwd', '0042', '--vars', '007', '--var', 'run.id=0042', '--var=run.attempt=007', '--'];
      const result = await runBin(
        bin,
        [...args, '/bin/sh', '-c', 'pwd; printf "%s %s\n" "$1" "$HARNESS_TASK_ID"', 'sh', '{{run.id}}.{{run.attempt}}'],
        {
          cwd: dir.path,
        },
      );
      assert.is(result.exitCode, 0, result.stderr);
      assert.is(result.stdout, `${join(realpathSync(dir.path), '0042')}\n0042.007 0100\n`);
      const equals = await runBin(bin, ['--cwd=0042', '--', '/bin/sh', '-c', 'pwd'], { cwd: dir.path });
      assert.is(equals.stdout, `${join(realpathSync(dir.path), '0042')}\n`, equals.stderr);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'exit codes: the hook’s own, 127 not found, 126 not executable, 128+N killed by a signal',
  withTimeout(90_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      assert.is((await runBin(bin, ['--', shFixture('hook-marker.sh'), marker, '3'])).exitCode, 3);
      assert.is((await runBin(bin, ['--', shFixture('hook-marker.sh'), marker])).exitCode, 0);
      const missing = await runBin(bin, ['--', join(dir.path, 'missing')]);
      assert.is(missing.exitCode, 127);
      assert.match(missing.stderr, /^run-hook: spawn_failed: /);
      const empty = await runBin(bin, ['--', '']);
      assert.is(empty.exitCode, 127, 'an empty hook name is not found, as GNU timeout says');
      assert.match(empty.stderr, /^run-hook: spawn_failed: pre_run hook "" could not be started: /);
      const plain = join(dir.path, 'not-executable');
      writeFileSync(plain, '#!/bin/sh\nexit 0\n');
      chmodSync(plain, 0o644);
      assert.is((await runBin(bin, ['--', plain])).exitCode, 126);
      const killed = await runBin(bin, ['--', '/bin/sh', '-c', 'kill -KILL $$']);
      assert.is(killed.exitCode, 128 + 9);
      assert.match(killed.stderr, /^run-hook: signaled: /);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a timeout exits 124, kills the TERM-ignoring grandchild, and --json reports timed_out as the last line',
  withTimeout(90_000, async () => {
    const dir = tempDir();
    try {
      const pidFile = join(dir.path, 'grandchild.pid');
      let settled = false;
      const running = runBin(bin, ['--timeout', '4s', '--grace', '300ms', '--json', '--', shFixture('hook-tree.sh'), pidFile]).finally(
        () => (settled = true),
      );
      const grandchild = await waitForPid(pidFile, () => settled);
      const result = await running;
      assert.is(result.exitCode, 124, result.stderr);
      assert.ok(grandchild);
      assert.not.ok(isAlive(grandchild!));
      const lines = parseJsonLines(result.stdout) as { reason: string; ok: boolean }[];
      assert.is(lines.length, 1);
      assert.is(lines[0]!.reason, 'timed_out');
      assert.match(result.stderr, /^run-hook: timed_out: /);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  '--timeout 700h (past setTimeout’s 24.8 days) does not fire early; --timeout 0 means none',
  withTimeout(60_000, async () => {
    for (const timeout of ['700h', '0']) {
      const result = await runBin(bin, ['--timeout', timeout, '--grace', '700h', '--', 'sh', '-c', 'sleep 0.3; exit 3']);
      assert.is(result.exitCode, 3, `--timeout ${timeout}: ${result.stderr}`);
      assert.is(result.stderr, '');
    }
  }),
);

test(
  '--json prints the outcome as its own last line after the hook’s output; stderr passes through',
  withTimeout(60_000, async () => {
    const result = await runBin(bin, ['--json', '--', shFixture('hook-output.sh'), '2', '5']);
    assert.is(result.exitCode, 5);
    const lines = result.stdout.split('\n');
    assert.is(lines.pop(), '');
    assert.equal(lines.slice(0, 3), ['out 0', 'out 1', 'no newline at the end']);
    assert.is(lines.length, 4);
    const outcome = JSON.parse(lines[3]!) as Record<string, unknown>;
    assert.is(outcome.reason, 'exited');
    assert.is(outcome.exitCode, 5);
    assert.is(outcome.stderrTail, 'err 0\nerr 1\n');
    assert.is(result.stderr, 'err 0\nerr 1\n');
  }),
);

test(
  'SIGTERM to run-hook interrupts the hook and tears its tree down',
  withTimeout(90_000, async () => {
    const dir = tempDir();
    try {
      const pidFile = join(dir.path, 'grandchild.pid');
      let pid = -1;
      let settled = false;
      const running = runBin(bin, ['--grace', '300ms', '--json', '--', shFixture('hook-tree.sh'), pidFile], {
        onSpawn: (p) => (pid = p),
      }).finally(() => (settled = true));
      const grandchild = await waitForPid(pidFile, () => settled);
      assert.ok(grandchild);
      process.kill(pid, 'SIGTERM');
      const result = await running;
      assert.is(result.exitCode, 128 + 15, result.stderr);
      assert.is((parseJsonLines(result.stdout)[0] as { reason: string }).reason, 'interrupted');
      assert.not.ok(isAlive(grandchild!));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'QUIT, USR1 and USR2 to run-hook reach the hook’s group (its exit code stands), ALRM tears the tree down (142), Ctrl-Z stops the hook too: none leaves the hook running',
  withTimeout(90_000, async () => {
    for (const [name, code] of [
      ['QUIT', 3],
      ['USR1', 3],
      ['USR2', 3],
      ['ALRM', 128 + 14],
    ] as const) {
      const child = spawn(process.execPath, [bin, '--grace', '300ms', '--', shFixture('trap-signal.sh'), name === 'ALRM' ? 'USR2' : name], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const closed = once(child, 'close');
      const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      const hook = processIdentity(Number(line));
      try {
        child.kill(`SIG${name}`);
        const [exitCode] = (await closed) as [number | null];
        assert.is(exitCode, code, `SIG${name}: ${stderr}`);
        assert.not.match(stderr, /Debugger|inspector/, `SIG${name}: no inspector`);
        assert.not.ok(hook && isAlive(hook), `SIG${name}: the hook is gone`);
      } finally {
        if (hook && isAlive(hook)) process.kill(hook.pid, 'SIGKILL');
      }
    }
    const child = spawn(process.execPath, [bin, '--', shFixture('trap-signal.sh'), 'USR2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = once(child, 'close');
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const hook = Number(line);
    try {
      child.kill('SIGTSTP');
      await waitUntil('run-hook stopped', () => readProcStat(child.pid!)?.state === 'T', { timeoutMs: 10_000 });
      await waitUntil('the hook stopped', () => readProcStat(hook)?.state === 'T', { timeoutMs: 10_000 });
      child.kill('SIGCONT');
      await waitUntil('the hook resumed', () => readProcStat(hook)?.state !== 'T', { timeoutMs: 10_000 });
      child.kill('SIGUSR2');
      assert.is((await closed)[0], 3);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (processIdentity(hook)) process.kill(hook, 'SIGKILL');
    }
  }),
);

test(
  'a reader that closes our stdout ends the hook with SIGPIPE, as in a shell pipeline (| head -1)',
  withTimeout(90_000, async () => {
    const child = spawn(process.execPath, [bin, '--', 'yes'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.is(code, 128 + 13, stderr);
    assert.is(stderr, '');
    // The writer a grandchild (`sh -c 'yes; …'`): SIGPIPE too, not "Connection reset by peer".
    for (let i = 0; i < 5; i++) {
      const nested = spawn(process.execPath, [bin, '--', 'sh', '-c', 'yes; exit 0'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let said = '';
      nested.stderr.on('data', (c: Buffer) => (said += c.toString()));
      nested.stdout.once('data', () => nested.stdout.destroy());
      const [nestedCode] = (await once(nested, 'close')) as [number | null];
      assert.is(nestedCode, 128 + 13, said);
      assert.is(said, '');
    }
  }),
);

test(
  'GNU timeout’s durations on the command line: a bare number is seconds, d is days',
  withTimeout(60_000, async () => {
    const timedOut = await runBin(bin, ['--timeout', '0.3', '--grace', '0.2', '--', 'sleep', '10']);
    assert.is(timedOut.exitCode, 124, timedOut.stderr);
    for (const timeout of ['1d', '4294967296', '2.34e+5d']) {
      const result = await runBin(bin, ['--timeout', timeout, '--', 'sh', '-c', 'exit 3']);
      assert.is(result.exitCode, 3, `--timeout ${timeout}: ${result.stderr}`);
    }
  }),
);

test(
  'usage errors exit 125 with one line and a hint, never a stack trace',
  withTimeout(90_000, async () => {
    const dir = tempDir();
    try {
      const badJson = join(dir.path, 'bad.json');
      writeFileSync(badJson, '{"run": {"id": ["x"]}}');
      const cases: [string[], RegExp][] = [
        [[], /^run-hook: usage: no hook argv/],
        [['--tier', 'workdir', '--', 'true'], /^run-hook: usage: --tier "workdir"/],
        [['--timeout', '42D', '--', 'true'], /^run-hook: usage: --timeout "42D"/],
        [['--timeout', '-1', '--', 'true'], /^run-hook: usage: /],
        [['--var', 'noequals', '--', 'true'], /^run-hook: bad_assignment: /],
        [['--vars', join(dir.path, 'missing.json'), '--', 'true'], /^run-hook: bad_vars_file: /],
        [['--vars', badJson, '--', 'true'], /^run-hook: bad_vars_file: .*run\.id is an array/],
        [['--bogus', '--', 'true'], /^run-hook: usage: unknown option --bogus\n/],
        [['true'], /^run-hook: usage: unexpected "true" before --/],
      ];
      for (const [args, expected] of cases) {
        const result = await runBin(bin, args);
        assert.is(result.exitCode, 125, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, expected);
        assert.is(result.stderr.split('\n').length, 3, result.stderr);
        assert.match(result.stderr, /\n {2}hint: /);
        assert.is.not(result.stderr.includes('    at '), true);
      }
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  '--vars nested thousands deep is read without a stack trace: its deep name is unknown_variable, a bad value deep in it bad_vars_file; exit 125',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      // The flattening recursed once per level: a RangeError with its stack trace, exit 1.
      const depth = 50_000;
      const deep = (leaf: string) => `{"run": {"id": "r1"}, "x": ${'{"x": '.repeat(depth)}${leaf}${'}'.repeat(depth)}}`;
      const good = join(dir.path, 'deep.json');
      writeFileSync(good, deep('"v"'));
      const ok = await runBin(bin, ['--vars', good, '--', 'echo', '{{run.id}}']);
      assert.is(ok.exitCode, 125, ok.stderr.slice(0, 500));
      assert.is(ok.stdout, '');
      assert.ok(ok.stderr.startsWith(`run-hook: unknown_variable: --vars ${good}: x.x.x.`), ok.stderr.slice(0, 200));
      assert.ok(ok.stderr.includes(`… (${2 * depth + 1} characters): not a template variable`), ok.stderr.slice(0, 300));
      assert.ok(ok.stderr.length < 2000, 'one readable line');
      assert.not.ok(ok.stderr.includes('    at '));
      const bad = join(dir.path, 'deep-bad.json');
      writeFileSync(bad, deep('[1]'));
      const refused = await runBin(bin, ['--vars', bad, '--', 'true']);
      assert.is(refused.exitCode, 125, refused.stderr.slice(0, 500));
      assert.ok(refused.stderr.startsWith(`run-hook: bad_vars_file: --vars ${bad}: x.x.x.`), refused.stderr.slice(0, 200));
      assert.ok(refused.stderr.includes('.x is an array, not a string or number\n'), refused.stderr.slice(-200));
      assert.not.ok(refused.stderr.includes('    at '));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  '--help lists the exit codes',
  withTimeout(60_000, async () => {
    const result = await runBin(bin, ['--help']);
    assert.is(result.exitCode, 0);
    assert.match(result.stdout, 'Exit codes');
    assert.match(result.stdout, '124');
    assert.match(result.stdout, '125');
  }),
);

test(
  'the terminal hangs up while the hook runs (tmux pane killed, HUP ignored by the caller): the hook’s exit code, never Node’s abort (134)',
  withTimeout(60_000, async () => {
    const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
    // The hook waits, after it started, until the test has hung the terminal up.
    const wait = 'touch "$T/started"; while [ ! -e "$T/hung" ]; do sleep 0.05; done; exit 3';
    const term = await inHangingTerminal(`${quoted(process.execPath)} ${quoted(bin)} -- sh -c ${quoted(wait)} 2>"$T/err"`, process.env);
    try {
      await waitUntil('the hook started', () => existsSync(join(term.dir, 'started')));
      await term.hangUp();
      writeFileSync(join(term.dir, 'hung'), '');
      const err = () => readFileSync(join(term.dir, 'err'), 'utf8');
      assert.is(await term.exitStatus(), 3, err());
      assert.not.match(err(), /Assertion failed|Native stack trace/);
    } finally {
      await term.cleanup();
    }
  }),
);

test(
  'run-hook’s stdout failing with other than EPIPE (a full disk: /dev/full) is run-hook’s failure: 125 and one line, never the hook’s 0',
  withTimeout(30_000, async () => {
    const full = openSync('/dev/full', 'w');
    try {
      const child = spawn(process.execPath, [bin, '--', 'sh', '-c', 'echo lost; exit 0'], { stdio: ['ignore', full, 'pipe'] });
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      const [code] = (await once(child, 'close')) as [number | null];
      assert.is(code, 125, stderr);
      assert.match(stderr, /^run-hook: stdout_failed: the hook's output could not be written: ENOSPC/m);
    } finally {
      closeSync(full);
    }
  }),
);

test.run();
