// Cases ported from GNU coreutils' tests/timeout/*.sh (and the signal, pipe and option
// behaviour GNU timeout users expect), run through the real bin.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, createReadStream, existsSync, openSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir, waitUntil, withTimeout } from '@runplan/test-fixtures';
import { readProcStat } from '../src/index.js';
import type { SettleReport } from '../src/report.js';
import { alive, killQuietly, pidsIn, settleBin, sh, startSettle } from './support.js';

const settle = (args: string[]) => runBin(settleBin, args);

// Everything a stream yields, as text.
async function readAll(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}
// dist/test/gnu-timeout.test.js → packages/settle
const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

test(
  'QUIT, USR1, USR2, PIPE, XCPU and XFSZ to settle reach the command’s group; settle keeps waiting and exits with its code',
  withTimeout(60_000, async () => {
    for (const name of ['QUIT', 'USR1', 'USR2', 'PIPE', 'XCPU', 'XFSZ'] as const) {
      const run = startSettle(['--', sh('trap-signal.sh'), name]);
      const pid = Number(await run.firstLine);
      run.child.kill(`SIG${name}`);
      const exit = await run.exit;
      killQuietly(pid);
      assert.is(exit.code, 3, `SIG${name}: the command trapped it and exited 3`);
      // SIGUSR1 never opens Node's inspector ("Debugger listening on ws://…"), and settle
      // reports no outcome of its own (the shell may say its sleep was killed).
      assert.not.match(exit.stderr, /Debugger|inspector|^settle:/m, `SIG${name}: ${exit.stderr}`);
      assert.not.ok(alive(pid), `SIG${name}: the command is gone`);
    }
  }),
);

test(
  'a relayed signal that kills the command: settle exits 128+N, as the command did',
  withTimeout(30_000, async () => {
    for (const [signal, code] of [
      ['SIGQUIT', 131],
      ['SIGUSR2', 140],
    ] as const) {
      const run = startSettle(['--', sh('sleeper.sh')]);
      const pid = Number(await run.firstLine);
      run.child.kill(signal);
      const exit = await run.exit;
      killQuietly(pid);
      assert.is(exit.code, code, signal);
      assert.is(exit.stderr, '');
    }
  }),
);

test(
  'SIGTSTP to settle (Ctrl-Z) stops the command’s group as well as settle; SIGCONT (fg) resumes both',
  withTimeout(30_000, async () => {
    const run = startSettle(['--', sh('sleeper.sh')], undefined, { job: true });
    const pid = Number(await run.firstLine);
    const settlePid = run.child.pid!;
    try {
      const state = (p: number) => readProcStat(p)?.state;
      run.child.kill('SIGTSTP');
      await waitUntil('settle stopped', () => state(settlePid) === 'T', { timeoutMs: 10_000 });
      // GNU timeout's command shares its process group, so the terminal stops both; settle's
      // runs in a session of its own and would keep running unwatched.
      await waitUntil('the command stopped', () => state(pid) === 'T', { timeoutMs: 10_000 });
      run.child.kill('SIGCONT');
      await waitUntil('the command resumed', () => state(pid) !== 'T', { timeoutMs: 10_000 });
      assert.is.not(state(settlePid), 'T', 'settle resumed');
      run.child.kill('SIGTERM');
      const exit = await run.exit;
      assert.is(exit.code, 143, exit.stderr);
      assert.not.ok(alive(pid), 'the command is gone');
    } finally {
      killQuietly(pid);
      killQuietly(settlePid);
    }
  }),
);

test(
  'SIGTSTP to settle in an orphaned process group (setsid: no shell can resume it) is ignored, as the kernel ignores it there: the deadline still ends the command',
  withTimeout(30_000, async () => {
    // detached: settle leads a session of its own, its parent outside it: an orphaned group.
    const child = spawn(process.execPath, [settleBin, '--deadline', '2', '--', sh('sleeper.sh')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const firstLine = new Promise<string>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(c.toString())));
    const pid = Number(await firstLine);
    try {
      child.kill('SIGTSTP');
      // Stopped, settle and its command would never end: the deadline could not fire.
      let bound: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        exit,
        new Promise<string>((resolve) => (bound = setTimeout(() => resolve('still stopped'), 15_000))),
      ]);
      clearTimeout(bound);
      assert.is(code, 124, stderr);
      assert.not.ok(alive(pid), 'the command is gone');
    } finally {
      killQuietly(pid);
      killQuietly(child.pid);
    }
  }),
);

test(
  'Ctrl-Z stops what left the command’s process group too (a setsid descendant, found by its tag); fg resumes it',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    const pidFile = join(dir.path, 'escaped');
    const run = startSettle(
      ['--', 'sh', '-c', `setsid sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 100' ${pidFile} & echo $$; exec sleep 100`],
      undefined,
      { job: true },
    );
    const pid = Number(await run.firstLine);
    const settlePid = run.child.pid!;
    let escaped = 0;
    try {
      escaped = await waitUntil('the setsid descendant started', () => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')));
      const state = (p: number) => readProcStat(p)?.state;
      assert.is.not(readProcStat(escaped)?.pgrp, readProcStat(pid)?.pgrp, 'it left the command’s group');
      run.child.kill('SIGTSTP');
      await waitUntil('settle stopped', () => state(settlePid) === 'T', { timeoutMs: 10_000 });
      assert.is(state(escaped), 'T', 'the escaped descendant stopped with the command');
      assert.is(state(pid), 'T');
      run.child.kill('SIGCONT');
      await waitUntil('the descendant resumed', () => state(escaped) !== 'T', { timeoutMs: 10_000 });
      run.child.kill('SIGTERM');
      const exit = await run.exit;
      assert.is(exit.code, 143, exit.stderr);
      await waitUntil('the descendant is gone', () => !alive(escaped), { timeoutMs: 10_000 });
    } finally {
      killQuietly(escaped || undefined);
      killQuietly(-pid);
      killQuietly(settlePid);
      dir.cleanup();
    }
  }),
);

test(
  'a Ctrl-Z longer than --stall is no stall: the stall clock is held while stopped and starts over on SIGCONT',
  withTimeout(30_000, async () => {
    const run = startSettle(['--stall', '1', '--', 'sh', '-c', 'echo $$; while :; do echo tick; sleep 0.1; done'], undefined, {
      job: true,
    });
    let stderr = '';
    run.child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const stderrOf = () => JSON.stringify(stderr);
    let ticks = 0;
    run.child.stdout!.on('data', (c: Buffer) => (ticks += c.toString().split('tick').length - 1));
    const pid = Number(await run.firstLine);
    const settlePid = run.child.pid!;
    try {
      const state = (p: number) => readProcStat(p)?.state;
      run.child.kill('SIGTSTP');
      await waitUntil('settle stopped', () => state(settlePid) === 'T', { timeoutMs: 10_000 }).catch((e: Error) => {
        throw new Error(`${e.message} (settle ${state(settlePid)}, the command ${state(pid)}; stderr: ${stderrOf()})`);
      });
      await waitUntil('the command stopped', () => state(pid) === 'T', { timeoutMs: 10_000 }).catch((e: Error) => {
        throw new Error(`${e.message} (settle ${state(settlePid)}, the command ${state(pid)}; stderr: ${stderrOf()})`);
      });
      // Stopped for longer than the stall period: the time passing is what is tested.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const before = ticks;
      run.child.kill('SIGCONT');
      await waitUntil('the command writes again', () => ticks > before + 3, { timeoutMs: 10_000 });
      run.child.kill('SIGTERM');
      const exit = await run.exit;
      assert.is(exit.code, 143, exit.stderr);
      assert.not.match(exit.stderr, /stalled/);
    } finally {
      killQuietly(-pid); // the command's whole group, stopped or not: a member left holding settle's stderr would hold this file open
      killQuietly(settlePid);
    }
  }),
);

test(
  'a command that cannot be run for a reason other than not found is 126, as in GNU: ENOTDIR, ELOOP, ENAMETOOLONG, ETXTBSY',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'file');
      writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      symlinkSync(join(dir.path, 'loop-b'), join(dir.path, 'loop-a'));
      symlinkSync(join(dir.path, 'loop-a'), join(dir.path, 'loop-b'));
      const busy = join(dir.path, 'busy');
      writeFileSync(busy, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const writing = openSync(busy, 'r+'); // open for writing: exec fails with ETXTBSY
      try {
        for (const [path, code] of [
          [join(file, 'below'), 'ENOTDIR'],
          [join(dir.path, 'loop-a'), 'ELOOP'],
          [join(dir.path, 'x'.repeat(300)), 'ENAMETOOLONG'],
          [busy, 'ETXTBSY'],
        ] as const) {
          const r = await settle(['--', path]);
          assert.match(r.stderr, new RegExp(`^settle: spawn_failed: .*${code}`), code);
          assert.is(r.exitCode, 126, `${code}: ${r.stderr}`);
        }
      } finally {
        closeSync(writing);
      }
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a TERM handler’s own subprocesses are not signalled again: their work and output survive the teardown, as under GNU timeout',
  withTimeout(60_000, async () => {
    // The handler runs a cleanup (a sh that reports a TERM of its own), then exits 1.
    const script = `trap 'sh -c "trap \\"echo cleanup-got-TERM\\" TERM; sleep 0.5; echo saved"; exit 1' TERM; echo ready; sleep 60 & wait`;
    for (const ownership of ['auto', 'group+tag']) {
      const r = await settle(['--ownership', ownership, '--deadline', '300ms', '--', 'sh', '-c', script]);
      assert.is(r.exitCode, 124, `${ownership}: ${r.stderr}`);
      assert.is(r.stdout, 'ready\nsaved\n', ownership);
      assert.match(r.stderr, /^settle: timed_out: sh still running at the --deadline of 300ms; teardown clean/m, ownership);
    }
  }),
);

test(
  'SIGALRM to settle is a timeout: the tree is torn down, exit 124, the report says timed_out',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const report = join(dir.path, 'r.json');
      const run = startSettle(['--report', report, '--', sh('sleeper.sh')]);
      const pid = Number(await run.firstLine);
      run.child.kill('SIGALRM');
      const exit = await run.exit;
      killQuietly(pid);
      assert.is(exit.code, 124);
      assert.match(exit.stderr, /^settle: timed_out: SIGALRM received; teardown clean/);
      const r = JSON.parse(readFileSync(report, 'utf8')) as SettleReport;
      assert.is(r.reason, 'timed_out');
      assert.is(r.settleExitCode, 124);
      assert.not.ok(alive(pid));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'settle’s stderr closed by its reader: the timed_out line is lost, the exit code (124) and the report are not',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const report = join(dir.path, 'r.json');
      const child = spawn(process.execPath, [settleBin, '--report', report, '--deadline', '300ms', '--', 'sleep', '10'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child.stderr.destroy(); // `settle … 2>&1 | :`
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.is(code, 124);
      assert.is((JSON.parse(readFileSync(report, 'utf8')) as SettleReport).reason, 'timed_out');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  '--report to a pipe (/dev/stdout | jq) or a device: written into it, the command’s exit code kept',
  withTimeout(30_000, async () => {
    const r = await settle(['--report', '/dev/stdout', '--', 'sh', '-c', 'echo hi; exit 3']);
    assert.is(r.exitCode, 3, r.stderr);
    assert.ok(r.stdout.startsWith('hi\n'), r.stdout);
    const report = JSON.parse(r.stdout.slice(3)) as SettleReport;
    assert.is(report.settleExitCode, 3);
    assert.is(report.reason, 'exited');
    const toNull = await settle(['--report', '/dev/null', '--', 'sh', '-c', 'exit 4']);
    assert.is(toNull.exitCode, 4, toNull.stderr);
    assert.ok(statSync('/dev/null').isCharacterDevice(), '/dev/null was not renamed over');
    const dir = tempDir();
    try {
      const fifo = join(dir.path, 'report.fifo');
      execFileSync('mkfifo', [fifo]);
      const reader = readAll(createReadStream(fifo));
      const piped = await settle(['--report', fifo, '--', 'sh', '-c', 'exit 5']);
      assert.is(piped.exitCode, 5, piped.stderr);
      assert.is((JSON.parse(await reader) as SettleReport).settleExitCode, 5);
      assert.ok(statSync(fifo).isFIFO(), 'the FIFO was not renamed over');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  '--version prints settle’s version from package.json',
  withTimeout(20_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    const r = await settle(['--version']);
    assert.is(r.exitCode, 0);
    assert.is(r.stdout, `settle ${version}\n`);
  }),
);

test(
  '--version anywhere among settle’s own options asks for the version; --help outranks it; after -- it is the command’s argument',
  withTimeout(20_000, async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    const late = await settle(['--deadline', '1s', '--version', '--', 'false']);
    assert.is(late.exitCode, 0, late.stderr);
    assert.is(late.stdout, `settle ${version}\n`);
    const help = await settle(['--version', '--help']);
    assert.is(help.exitCode, 0, help.stderr);
    assert.match(help.stdout, '--deadline');
    const child = await settle(['--deadline', '10s', '--', sh('hook-args.sh'), '--version']);
    assert.is(child.exitCode, 0, child.stderr);
    assert.is(child.stdout, '1\0--version\0');
  }),
);

test(
  '--preserve-status (-p): the command’s own status even when it timed out',
  withTimeout(30_000, async () => {
    const killed = await settle(['--preserve-status', '--deadline', '200ms', '--', sh('sleeper.sh')]);
    assert.is(killed.exitCode, 143, killed.stderr);
    const clean = await settle(['-p', '--deadline', '200ms', '--', sh('exit0-on-term.sh')]);
    assert.is(clean.exitCode, 0, clean.stderr);
    const plain = await settle(['--deadline', '200ms', '--', sh('exit0-on-term.sh')]);
    assert.is(plain.exitCode, 124, 'without it a timeout is 124');
  }),
);

test(
  'a short option’s value attached, as getopt reads it (timeout -s9, -sKILL, -k1): -s9, -sINT, -ps9, -pk0',
  withTimeout(30_000, async () => {
    for (const [flags, code] of [
      [['-ps9'], 137],
      [['-p', '-sINT'], 130],
      [['-psKILL'], 137],
    ] as const) {
      const r = await settle([...flags, '--deadline', '200ms', '--', sh('sleeper.sh')]);
      assert.is(r.exitCode, code, `${flags.join(' ')}: ${r.stderr}`);
    }
    const started = Date.now();
    const ignoring = await settle(['-pk0', '--deadline', '200ms', '--', sh('ignore-term.sh')]);
    assert.is(ignoring.exitCode, 137, ignoring.stderr);
    assert.ok(Date.now() - started < 4_000, '-k0: KILL at once, not after the 5s grace');
    const unknown = await settle(['-pz', '--', 'true']);
    assert.is(unknown.exitCode, 125);
    assert.match(unknown.stderr, /^settle: usage: unknown option/);
  }),
);

test(
  '--kill-after (-k) alone sets the TERM→KILL wait; --grace stays for the pipes',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const report = join(dir.path, 'r.json');
      const started = Date.now();
      const r = await settle([
        '--report',
        report,
        '--grace',
        '20s',
        '--kill-after',
        '200ms',
        '--deadline',
        '200ms',
        '--',
        sh('ignore-term.sh'),
      ]);
      assert.is(r.exitCode, 124, r.stderr);
      assert.ok(Date.now() - started < 10_000, 'KILL came after 200ms, not after the 20s grace');
      const parsed = JSON.parse(readFileSync(report, 'utf8')) as SettleReport;
      assert.is(parsed.teardown.result, 'escalated');
      const short = await settle(['-k', '0.2', '--deadline', '0.2', '--', sh('ignore-term.sh')]);
      assert.is(short.exitCode, 124, short.stderr);
    } finally {
      dir.cleanup();
    }
  }),
);

// GNU's `timeout -k 0` sends no KILL at all (a TERM-ignoring command runs on); settle always
// escalates, so 0 is no wait: KILL right after the first signal.
test(
  '-k 0 is not GNU’s “no KILL”: KILL follows the first signal at once, exit 124, the TERM-ignoring command is gone',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const report = join(dir.path, 'r.json');
      const r = await settle(['--report', report, '--grace', '20s', '-k', '0', '--deadline', '300ms', '--', sh('ignore-term.sh')]);
      assert.is(r.exitCode, 124, r.stderr);
      assert.match(r.stderr, /^settle: timed_out: .*teardown escalated/);
      const parsed = JSON.parse(readFileSync(report, 'utf8')) as SettleReport;
      assert.is(parsed.reason, 'timed_out');
      assert.is(parsed.signal, 'SIGKILL');
      assert.is(parsed.teardown.result, 'escalated');
      assert.equal(parsed.teardown.survivors, []);
      // No wait between TERM and KILL: not the 20s grace, not any wait of its own (typically ~10 ms).
      assert.ok(
        parsed.durationMs - parsed.deadlineMs! < 2_000,
        `KILL came ${parsed.durationMs - parsed.deadlineMs!} ms after the deadline`,
      );
      const [pid] = pidsIn(r.stdout);
      assert.ok(pid !== undefined, r.stdout);
      assert.not.ok(alive(pid!), 'the TERM-ignoring command is gone');
    } finally {
      dir.cleanup();
    }
  }),
);

// timeout-large-parameters.sh and timeout-parameters.sh
test(
  'GNU’s large and odd durations: 2^32 s, 2^63 d, 2.34e+5d, LDBL_MAX and 10.34 run the command normally',
  withTimeout(30_000, async () => {
    for (const duration of ['4294967296', '9223372036854775808d', '2.34e+5d', `1${'0'.repeat(4932)}`, '10.34', '9.999999999', '1d']) {
      const r = await settle(['--deadline', duration, '--', 'sleep', '0']);
      assert.is(r.exitCode, 0, `--deadline ${duration.slice(0, 30)}: ${r.stderr}`);
    }
    const killAfter = await settle(['--kill-after', '4294967296', '--deadline', '0', '--', 'sleep', '0']);
    assert.is(killAfter.exitCode, 0, killAfter.stderr);
  }),
);

test(
  'GNU’s underflow rounds up: --deadline 1e-5000 times out at once',
  withTimeout(20_000, async () => {
    const r = await settle(['--deadline', '1e-5000', '--', 'sleep', '10']);
    assert.is(r.exitCode, 124, r.stderr);
  }),
);

test(
  'GNU’s refusals are 125 and the command never runs: invalid, 42D, a negative LDBL_MAX, --kill-after invalid, --signal invalid',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const touch = ['--', 'sh', '-c', `touch ${marker}`];
      for (const args of [
        ['--deadline', 'invalid'],
        ['--deadline', '42D'],
        [`--deadline=-1${'0'.repeat(4932)}`],
        ['--kill-after', 'invalid', '--deadline', '1'],
        ['--signal', 'invalid', '--deadline', '1'],
      ]) {
        const r = await settle([...args, ...touch]);
        assert.is(r.exitCode, 125, args.join(' ').slice(0, 40));
        assert.match(r.stderr, /^settle: usage: /);
      }
      assert.not.ok(existsSync(marker), 'nothing ran');
      assert.is((await settle(['--deadline', '10', '--', '.'])).exitCode, 126);
      assert.is((await settle(['--deadline', '10', '--', 'no_such_command_here'])).exitCode, 127);
      // GNU: `timeout 10 ''` → "failed to run command ‘’: No such file or directory", 127.
      const empty = await settle(['--deadline', '10', '--', '']);
      assert.is(empty.exitCode, 127, empty.stderr);
      assert.match(empty.stderr, /^settle: spawn_failed: cannot run "": ENOENT: an empty command name\n {2}hint: not found/);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'settle as PID 1 of a pid namespace that sees the host’s /proc refuses up front (125), nothing runs; with its own /proc it works',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const started = Date.now();
      const inside = (...flags: string[]) => [...flags, '--map-root-user', process.execPath, settleBin, '--deadline', '100ms', '--'];
      const r = await runBin('unshare', [...inside('--pid', '--fork'), 'sh', '-c', `touch ${marker}; sleep 10`]);
      assert.is(r.exitCode, 125, r.stderr);
      assert.match(r.stderr, /^settle: spawn_failed: \/proc belongs to another pid namespace \(it names us \d+, we are 1\)/);
      assert.ok(Date.now() - started < 5_000, 'refused at once, not after a teardown that cannot work');
      assert.not.ok(existsSync(marker), 'nothing ran');
      const own = await runBin('unshare', [...inside('--pid', '--fork', '--mount-proc'), 'sleep', '10']);
      assert.is(own.exitCode, 124, own.stderr);
      assert.match(own.stderr, /teardown clean/);
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
