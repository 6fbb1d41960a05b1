import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, closeSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inHangingTerminal, runBin, tempDir, waitUntil, withTimeout } from '@runplan/test-fixtures';
import type { SettleReport } from '../src/report.js';
import { alive, killQuietly, pidsIn, settleBin, sh, startSettle, taggedAlive } from './support.js';

const MiB = 1024 * 1024;
const settle = (args: string[], input?: string | Buffer) => runBin(settleBin, args, input === undefined ? {} : { input });

// Runs the bin with --report into a temp dir and returns the result and the parsed report.
async function settleReporting(args: string[], input?: string) {
  const dir = tempDir();
  try {
    const path = join(dir.path, 'report.json');
    const r = await settle(['--report', path, ...args], input);
    const report = JSON.parse(readFileSync(path, 'utf8')) as SettleReport;
    assert.equal(readdirSync(dir.path), ['report.json'], 'no temp file left behind');
    return { r, report };
  } finally {
    dir.cleanup();
  }
}

test(
  'the child’s exit code, stdout and stderr pass through',
  withTimeout(20_000, async () => {
    const r = await settle(['--', 'sh', '-c', 'echo out; echo err >&2; exit 7']);
    assert.is(r.exitCode, 7);
    assert.is(r.stdout, 'out\n');
    assert.is(r.stderr, 'err\n');
  }),
);

test(
  'path and name values are taken as typed: an empty one is refused, never read as a file named 0',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      // The parser (mri) reads numeric-looking values as numbers: '' became 0, 010 became 10.
      writeFileSync(join(dir.path, '0'), 'the file named 0\n');
      const run = (args: string[]) => runBin(settleBin, args, { cwd: dir.path });
      for (const [flag, value] of [
        ['--input', ''],
        ['--report', ''],
        ['--cwd', ''],
        ['--signal', ''],
        ['-s', ''],
      ] as const) {
        const r = await run([flag, value, '--', 'cat']);
        assert.is(r.exitCode, 125, `${flag} ''`);
        assert.match(r.stderr, `settle: usage: --${flag === '-s' ? 'signal' : flag.slice(2)} needs one value`);
        assert.is(r.stdout, '', `${flag} '' read nothing`);
      }
      assert.is(readFileSync(join(dir.path, '0'), 'utf8'), 'the file named 0\n', '--report did not write over 0');
      const env = await run(['--env', '', '--', 'true']);
      assert.is(env.exitCode, 125);
      assert.match(env.stderr, 'settle: usage: --env  is not K=V');
      const cwd = await run(['--cwd', '010', '--', 'pwd']);
      assert.is(cwd.exitCode, 125);
      assert.match(cwd.stderr, 'cwd 010 does not exist');
      const value = await run(['--env', 'V=010', '--input', '0', '--', 'sh', '-c', 'cat; echo "$V"']);
      assert.is(value.stdout, 'the file named 0\n010\n');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'settle’s stdin goes to the child; --env and --cwd apply',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      const r = await settle(
        [
          '--input',
          '-',
          '--cwd',
          dir.path,
          '--env',
          'GREETING=hi there',
          '--env',
          'EMPTY=',
          '--',
          'sh',
          '-c',
          'cat; echo "$GREETING|$EMPTY|$(pwd)"',
        ],
        'from stdin\n',
      );
      assert.is(r.exitCode, 0);
      assert.is(r.stdout, `from stdin\nhi there||${dir.path}\n`);
      const plain = await settle(['--', 'cat'], 'no options at all\n');
      assert.is(plain.stdout, 'no options at all\n');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a split UTF-8 character and 64 MiB of random binary pass through byte-exact',
  withTimeout(60_000, async () => {
    const split = await settle(['--', sh('split-utf8.sh')]);
    assert.equal([...split.stdoutBytes], [0xe2, 0x82, 0xac, 0x0a]);
    const big = await settle(['--', sh('random-binary.sh'), String(64 * MiB)]);
    assert.is(big.exitCode, 0);
    assert.is(big.stdoutBytes.length, 64 * MiB);
    assert.is(createHash('sha256').update(big.stdoutBytes).digest('hex'), big.stderr.trim());
  }),
);

test(
  '10 MB written then an immediate exit: nothing truncated through the bin',
  withTimeout(30_000, async () => {
    const r = await settle(['--', sh('write-then-exit.sh'), '10000000']);
    assert.is(r.exitCode, 0);
    assert.is(r.stdoutBytes.length, 10_000_000);
    const expected = Buffer.alloc(10_000_000);
    for (let at = 0; at < expected.length; at += 17) Buffer.from('0123456789abcdef\n').copy(expected, at);
    assert.ok(r.stdoutBytes.equals(expected));
  }),
);

test(
  'a child that ignores SIGTERM: 124 at deadline + grace, report says escalated',
  withTimeout(30_000, async () => {
    const { r, report } = await settleReporting(['--deadline', '300ms', '--grace', '300ms', '--', sh('ignore-term.sh')]);
    const [pid] = pidsIn(r.stdout);
    killQuietly(pid);
    assert.is(r.exitCode, 124);
    assert.match(r.stderr, /^settle: timed_out: .*ignore-term\.sh still running at the --deadline of 300ms; teardown escalated/);
    assert.is(report.reason, 'timed_out');
    assert.is(report.settleExitCode, 124);
    assert.is(report.signal, 'SIGKILL');
    assert.is(report.deadlineMs, 300);
    assert.is(report.graceMs, 300);
    assert.is(report.teardown.result, 'escalated');
    assert.ok(report.teardown.signalled.includes(pid!));
    assert.equal(report.teardown.survivors, []);
    assert.is(report.error, null);
    assert.is(report.bytesOut, r.stdoutBytes.length);
    assert.not.ok(alive(pid!));
    assert.equal(taggedAlive(report.tag), []);
  }),
);

test(
  'a child that exits 0 on TERM after the deadline still makes settle exit 124',
  withTimeout(30_000, async () => {
    const { r, report } = await settleReporting(['--deadline', '300ms', '--', sh('exit0-on-term.sh')]);
    assert.is(r.exitCode, 124);
    assert.is(report.reason, 'timed_out');
    assert.is(report.exitCode, 0);
  }),
);

test(
  'exit 0 while a setsid grandchild holds stdout: settle returns, grandchild dead, held pipe in the report',
  withTimeout(30_000, async () => {
    const { r, report } = await settleReporting(['--grace', '500ms', '--', sh('setsid-holds-stdout.sh'), 'ignore-term']);
    const [grandchild] = pidsIn(r.stdout);
    killQuietly(grandchild);
    assert.is(r.exitCode, 0);
    assert.ok(report.teardown.heldPipe);
    assert.is(report.teardown.result, 'escalated');
    assert.not.ok(alive(grandchild!));
  }),
);

test(
  'a deadline reaches a grandchild in the same group; a double-forking daemon is ended after exit',
  withTimeout(30_000, async () => {
    const group = await settle(['--deadline', '300ms', '--grace', '500ms', '--', sh('group-grandchild.sh')]);
    const [grandchild] = pidsIn(group.stdout);
    const daemonRun = await settle(['--grace', '300ms', '--', sh('double-fork-daemon.sh')]);
    const [daemon] = pidsIn(daemonRun.stdout);
    killQuietly(grandchild);
    killQuietly(daemon);
    assert.is(group.exitCode, 124);
    assert.not.ok(alive(grandchild!));
    assert.is(daemonRun.exitCode, 0);
    assert.ok(daemon);
    assert.not.ok(alive(daemon!));
  }),
);

test(
  '--input to a child that closes stdin at once: EPIPE in the report, the child’s own exit code',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const prompt = join(dir.path, 'prompt.txt');
      writeFileSync(prompt, Buffer.alloc(MiB, 'x'));
      const { r, report } = await settleReporting(['--input', prompt, '--', sh('close-stdin.sh'), '0.3']);
      assert.is(r.exitCode, 0);
      assert.is(r.stdout, 'closed\n');
      assert.equal(report.error, { code: 'EPIPE', where: 'stdin', message: report.error?.message ?? '' });
      assert.ok(report.bytesIn < MiB);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  '--input to a child that never reads and never exits: the deadline fires; `true` with a large --input exits 0',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const prompt = join(dir.path, 'prompt.txt');
      writeFileSync(prompt, Buffer.alloc(8 * MiB, 'x'));
      const stuck = await settle(['--input', prompt, '--deadline', '500ms', '--grace', '300ms', '--', sh('never-read-stdin.sh')]);
      assert.is(stuck.exitCode, 124);
      for (let i = 0; i < 5; i++) {
        const r = await settle(['--input', prompt, '--', 'true']);
        assert.is(r.exitCode, 0);
      }
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'not found 127, not executable 126, a missing or non-directory --cwd and a missing or directory --input 125, each with one line',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const script = join(dir.path, 'script.sh');
      writeFileSync(script, '#!/bin/sh\necho hi\n');
      chmodSync(script, 0o644);
      const missing = await settle(['--', join(dir.path, 'nope')]);
      assert.is(missing.exitCode, 127);
      assert.match(missing.stderr, /^settle: spawn_failed: cannot run ".*nope": .*ENOENT\n {2}hint: /);
      const denied = await settle(['--', script]);
      assert.is(denied.exitCode, 126);
      assert.match(denied.stderr, /^settle: spawn_failed: .*EACCES/);
      const nowhere = await settle(['--cwd', join(dir.path, 'gone'), '--', 'true']);
      assert.is(nowhere.exitCode, 125);
      assert.match(nowhere.stderr, /^settle: spawn_failed: cwd .*gone does not exist/);
      const noInput = await settle(['--input', join(dir.path, 'gone.txt'), '--', 'cat']);
      assert.is(noInput.exitCode, 125);
      assert.match(noInput.stderr, /^settle: spawn_failed: cannot open input .*gone\.txt: ENOENT/);
      // A --cwd that is a file, an --input that is a directory: refused before any spawn.
      const fileCwd = await settle(['--cwd', script, '--', 'true']);
      assert.is(fileCwd.exitCode, 125);
      assert.match(fileCwd.stderr, /^settle: spawn_failed: cwd .*script\.sh is not a directory/);
      const dirInput = await settle(['--input', dir.path, '--', 'cat']);
      assert.is(dirInput.exitCode, 125);
      assert.match(dirInput.stderr, /^settle: spawn_failed: input .* is a directory/);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'killed by SIGSEGV exits 139, by SIGKILL 137',
  withTimeout(30_000, async () => {
    assert.is((await settle(['--', sh('kill-self.sh'), 'SEGV'])).exitCode, 139);
    assert.is((await settle(['--', sh('kill-self.sh'), 'KILL'])).exitCode, 137);
  }),
);

test(
  'a directory as the program says so (126, no chmod hint); a script whose #! interpreter is missing says that (127), not "not found"',
  withTimeout(20_000, async () => {
    const dir = tempDir();
    try {
      const script = join(dir.path, 'script');
      writeFileSync(script, '#!/nonexistent/interpreter\necho hi\n');
      chmodSync(script, 0o755);
      const directory = await settle(['--', dir.path]);
      assert.is(directory.exitCode, 126);
      // It was `EACCES` and the hint `not executable; chmod +x it`, which a directory cannot be helped by.
      assert.is(
        directory.stderr,
        `settle: spawn_failed: cannot run "${dir.path}": spawn ${dir.path} EACCES (it is a directory, not a program)\n`,
      );
      const relative = await runBin(settleBin, ['--cwd', dir.path, '--', './'], {});
      assert.match(relative.stderr, '(it is a directory, not a program)');
      const interpreter = await settle(['--', script]);
      assert.is(interpreter.exitCode, 127);
      // It was ENOENT and `not found; check the name and PATH`, for a file that is there.
      assert.is(
        interpreter.stderr,
        `settle: spawn_failed: cannot run "${script}": spawn ${script} ENOENT (the file exists: the interpreter its #! line names was not found)\n  hint: fix the #! line, or run it through its interpreter\n`,
      );
      const missing = await settle(['--', join(dir.path, 'nothing')]);
      assert.is(missing.exitCode, 127);
      assert.match(missing.stderr, 'ENOENT\n  hint: not found; check the name and PATH\n');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'settle receiving SIGTERM (SIGINT) tears the child’s tree down and exits 143 (130)',
  withTimeout(30_000, async () => {
    for (const [signal, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const run = startSettle(['--grace', '300ms', '--', sh('ignore-term.sh')]);
      const pid = Number(await run.firstLine);
      run.child.kill(signal);
      const exit = await run.exit;
      killQuietly(pid);
      assert.is(exit.code, code);
      assert.match(exit.stderr, new RegExp(`^settle: interrupted: ${signal} received; teardown escalated`));
      assert.not.ok(alive(pid), 'the child is dead');
    }
  }),
);

test(
  'settle nested in settle: the outer deadline reaches the innermost TERM-ignoring command',
  withTimeout(60_000, async () => {
    const r = await settle([
      '--deadline',
      '6s',
      '--grace',
      '500ms',
      '--',
      process.execPath,
      settleBin,
      '--grace',
      '60s',
      '--',
      sh('ignore-term.sh'),
    ]);
    const [innermost] = pidsIn(r.stdout);
    killQuietly(innermost);
    assert.ok(innermost, 'the innermost command started');
    assert.is(r.exitCode, 124);
    assert.not.ok(alive(innermost!));
  }),
);

test(
  '--stall: no output for that long exits 124',
  withTimeout(30_000, async () => {
    const { r, report } = await settleReporting(['--stall', '300ms', '--grace', '300ms', '--', sh('sleeper.sh')]);
    assert.is(r.exitCode, 124);
    assert.match(r.stderr, /^settle: stalled: /);
    assert.is(report.reason, 'stalled');
    assert.is(report.stallMs, 300);
  }),
);

test(
  '--deadline 0 (bare, or 0s) and --stall 0 mean none, as in GNU timeout',
  withTimeout(30_000, async () => {
    for (const zero of ['0', '0s']) {
      const r = await settle(['--deadline', zero, '--stall', zero, '--', 'sh', '-c', 'sleep 0.3; echo finished']);
      assert.is(r.exitCode, 0, `${zero}: ${r.stderr}`);
      assert.is(r.stdout, 'finished\n');
    }
  }),
);

test(
  '--deadline 600h (past setTimeout’s 24.8 days) does not fire early: settle exits with the child’s code',
  withTimeout(30_000, async () => {
    const r = await settle(['--deadline', '600h', '--', 'sh', '-c', 'sleep 0.3; exit 3']);
    assert.is(r.exitCode, 3, r.stderr);
    assert.is(r.stderr, '');
  }),
);

test(
  '--stall and --grace of 600h do not fire early either: no stall, and the pipe held after exit is waited for',
  withTimeout(30_000, async () => {
    const { r, report } = await settleReporting([
      '--stall',
      '600h',
      '--grace',
      '600h',
      '--',
      'sh',
      '-c',
      '(sleep 0.5; echo late) & sleep 0.3; echo early',
    ]);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(r.stdout, 'early\nlate\n');
    assert.is(r.stderr, '');
    assert.is(report.reason, 'exited');
    assert.is(report.teardown.heldPipe, false);
  }),
);

test(
  'a deadline under 1 ms rounds up to 1 ms and fires (never down to 0, which means none)',
  withTimeout(30_000, async () => {
    const r = await settle(['--deadline', '0.1ms', '--grace', '300ms', '--', 'sleep', '5']);
    assert.is(r.exitCode, 124, r.stderr);
    assert.match(r.stderr, /^settle: timed_out: .*--deadline of 1ms/);
  }),
);

test(
  '--signal picks the first signal of the teardown',
  withTimeout(30_000, async () => {
    const { report } = await settleReporting(['--deadline', '200ms', '--signal', 'HUP', '--', sh('sleeper.sh')]);
    assert.is(report.signal, 'SIGHUP');
  }),
);

test(
  'a reader that closes settle’s stdout (`| head -1`) ends a flooding child with SIGPIPE: settle never hangs',
  withTimeout(30_000, async () => {
    const child = spawn(process.execPath, [settleBin, '--', sh('flood.sh')], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.once('data', () => child.stdout.destroy());
    const [code] = await once(child, 'exit');
    assert.is(code, 141);
    // The writer a grandchild (`sh -c 'yes; …'` does not exec it): it too ends by SIGPIPE, with
    // nothing to say, not "Connection reset by peer" (settle's pipe to it is a socket).
    for (let i = 0; i < 5; i++) {
      const nested = spawn(process.execPath, [settleBin, '--', 'sh', '-c', 'yes; exit 0'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      nested.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      nested.stdout.once('data', () => nested.stdout.destroy());
      const [nestedCode] = await once(nested, 'close');
      assert.is(nestedCode, 141, stderr);
      assert.is(stderr, '');
    }
  }),
);

test(
  'a slow reader gets everything after the command exits, however long past grace it pauses',
  withTimeout(60_000, async () => {
    // Small enough to fit the socket buffers: the command exits at once, the rest waits in settle.
    const child = spawn(process.execPath, [settleBin, '--grace', '300ms', '--', sh('write-then-exit.sh'), '350000'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // A 'readable' listener that reads nothing yet: the bytes stay in the pipe (a paused
    // stream without one would be flushed away by Node when the child exits).
    const chunks: Buffer[] = [];
    let reading = false;
    const drain = () => {
      for (let c: Buffer | null; reading && (c = child.stdout.read() as Buffer | null) !== null; ) chunks.push(c);
    };
    child.stdout.on('readable', drain);
    const closed = once(child, 'close');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the command is done; we are not reading yet
    reading = true;
    drain();
    const [code] = await closed;
    assert.is(code, 0);
    assert.is(Buffer.concat(chunks).length, 350_000);
  }),
);

test(
  'a reader that never reads cannot keep settle alive past the deadline and a few graces',
  withTimeout(60_000, async () => {
    const child = spawn(process.execPath, [settleBin, '--deadline', '500ms', '--grace', '300ms', '--', sh('flood.sh')], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.pause(); // never read: settle's own writes back up
    const [code] = await once(child, 'exit');
    child.stdout.destroy();
    assert.is(code, 124);
  }),
);

test(
  'settle’s stdout failing with other than EPIPE (a full disk: /dev/full) is settle’s failure: 125 and one line, never the command’s 0',
  withTimeout(30_000, async () => {
    const full = openSync('/dev/full', 'w');
    try {
      const child = spawn(process.execPath, [settleBin, '--', 'sh', '-c', 'echo lost; exit 0'], { stdio: ['ignore', full, 'pipe'] });
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      const [code] = (await once(child, 'close')) as [number | null];
      assert.is(code, 125, stderr);
      assert.match(stderr, /^settle: stdout_failed: the command's output could not be written: ENOSPC/m);
    } finally {
      closeSync(full);
    }
  }),
);

test(
  'a child killed by SIGKILL from outside: settle exits 137',
  withTimeout(30_000, async () => {
    const run = startSettle(['--', sh('sleeper.sh')]);
    const pid = Number(await run.firstLine);
    process.kill(pid, 'SIGKILL');
    const exit = await run.exit;
    assert.is(exit.code, 137);
    assert.is(exit.stderr, '');
  }),
);

// unshare(1) as the caller: root enters a new pid namespace directly, anyone else through
// a user namespace of their own (where they are root).
const unshareArgs = (...more: string[]) => [...(process.getuid?.() === 0 ? [] : ['--user', '--map-root-user']), '--pid', '--fork', ...more];

test(
  'in a pid namespace whose /proc is the host’s: 125, spawn_failed proc_mismatch, nothing runs; with its own /proc it runs',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const report = join(dir.path, 'report.json');
      const settleArgs = ['--report', report, '--', 'touch', marker];
      // Without --mount-proc, /proc/self names settle by its pid outside the namespace.
      const wrong = await runBin('unshare', [...unshareArgs(), process.execPath, settleBin, ...settleArgs]);
      assert.is(wrong.exitCode, 125, wrong.stderr);
      assert.match(
        wrong.stderr,
        /^settle: spawn_failed: \/proc belongs to another pid namespace \(it names us \d+, we are 1\); mount a \/proc of this namespace/,
      );
      assert.not.ok(existsSync(marker), 'the command never ran');
      const r = JSON.parse(readFileSync(report, 'utf8')) as SettleReport;
      assert.is(r.reason, 'spawn_failed');
      assert.equal(r.error && { code: r.error.code, where: r.error.where }, { code: 'proc_mismatch', where: 'proc' });
      // The remedy the message names: the namespace's own /proc.
      const right = await runBin('unshare', [...unshareArgs('--mount-proc'), process.execPath, settleBin, ...settleArgs]);
      assert.is(right.exitCode, 0, right.stderr);
      assert.ok(existsSync(marker), 'the command ran');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'the terminal hangs up while settle runs (tmux pane killed, HUP ignored by the caller): the command’s exit code, never Node’s abort (134)',
  withTimeout(60_000, async () => {
    const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
    // The command waits, after it started, until the test has hung the terminal up.
    const wait = 'touch "$T/started"; while [ ! -e "$T/hung" ]; do sleep 0.05; done; exit 3';
    const term = await inHangingTerminal(
      `${quoted(process.execPath)} ${quoted(settleBin)} -- sh -c ${quoted(wait)} 2>"$T/err"`,
      process.env,
    );
    try {
      await waitUntil('the command started', () => existsSync(join(term.dir, 'started')));
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
  'usage errors exit 125 with one line and a hint; nothing runs',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const cases: [string[], RegExp][] = [
        [['--deadline', '5x', '--', 'touch', marker], /^settle: usage: --deadline 5x is not a duration/],
        [['--grace', '5D', '--', 'touch', marker], /^settle: usage: --grace 5D is not a duration/],
        [['--bogus', '--', 'touch', marker], /^settle: usage: unknown option --bogus/],
        [['--signal', 'NOPE', '--', 'touch', marker], /^settle: usage: --signal NOPE is not a signal/],
        [['--env', 'NOEQUALS', '--', 'touch', marker], /^settle: usage: --env NOEQUALS is not K=V/],
        [['--deadline', '1s'], /^settle: usage: no command/],
        [['--'], /^settle: usage: no command after --/],
        [['touch', marker], /^settle: usage: put -- before the command/],
        [['--report', join(dir.path, 'missing', 'r.json'), '--', 'touch', marker], /^settle: report_unwritable: /],
        [['--report', dir.path, '--', 'touch', marker], /^settle: report_unwritable: --report .*: it is a directory/],
      ];
      for (const [args, message] of cases) {
        const r = await settle(args);
        assert.is(r.exitCode, 125, args.join(' '));
        assert.match(r.stderr, message);
        assert.not.match(r.stderr, /at .*\.js:\d+/, 'no stack trace');
      }
      assert.not.ok(existsSync(marker), 'nothing ran');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  '--help lists every option and the exit codes',
  withTimeout(20_000, async () => {
    const r = await settle(['--help']);
    assert.is(r.exitCode, 0);
    for (const word of [
      '--deadline',
      '--grace',
      '--signal',
      '--stall',
      '--input',
      '--report',
      '--cwd',
      '--env',
      '124',
      '125',
      '126',
      '127',
      '128+N',
    ]) {
      assert.ok(r.stdout.includes(word), word);
    }
  }),
);

test.run();
