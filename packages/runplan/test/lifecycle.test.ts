import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin, tempDir, waitUntil, withTimeout } from '@runplan/test-fixtures';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acquireLock } from '@runplan/journal';
import { readProcStat } from '@runplan/settle';
import { gitShim } from './git-shim.js';
import { alive, ofType, records, runIds, RUNPLAN, runplan, setup, slugDir, waitForEvent, waitForLine } from './support.js';

const HOLD = { MOCK_HOLD: 'only', MOCK_HOLD_SECONDS: '120' };

// Kills whatever mock agents a test left running (a killed coordinator cannot).
function killAgents(ledger: string): void {
  for (const { pid } of readLedger(ledger)) {
    try {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

test(
  'a second run of the slug exits 4 at once naming the first; stop tears the attempt down: receipt interrupted, exit 143, status failed (interrupted)',
  withTimeout(120_000, async () => {
    const f = setup('single', {}, HOLD);
    try {
      let first = 0;
      const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (pid) => (first = pid) });
      await waitForEvent(f.repo, 'single', 'attempt-started');

      const second = await runplan(['run', f.plan], f);
      assert.is(second.exitCode, 4, second.stderr);
      assert.match(second.stderr, new RegExp(`lock_held: .*pid ${first}\\b.*start time`));
      assert.is(runIds(f.repo, 'single').length, 1, 'the second run wrote nothing');

      const status = await runplan(['status', '--json'], f);
      assert.is(status.exitCode, 0);
      assert.is(JSON.parse(status.stdout.trim()).state, 'running');

      const stop = await runplan(['stop', 'single', '--wait', '60s'], f);
      assert.is(stop.exitCode, 0, stop.stderr);
      const receiptLine = JSON.parse(stop.stdout.trim());
      assert.is(receiptLine.type, 'run-failed');
      assert.is(receiptLine.data.class, 'interrupted');

      const r = await running;
      assert.is(r.exitCode, 143, r.stderr);
      assert.match(r.stderr, /interrupted/);
      const agent = readLedger(f.ledger)[0]!;
      assert.not.ok(alive(agent.pid), 'the agent was torn down');
      const rs = await records(f.repo, 'single');
      assert.is(rs.filter((x) => x.terminal === true).length, 1);
      const closed = ofType(rs, 'attempt-closed')[0]!;
      assert.is(closed.outcome, 'interrupted');
      assert.ok(
        rs.findIndex((x) => x.type === 'attempt-closed') < rs.findIndex((x) => x.terminal === true),
        'attempts end before the receipt',
      );

      const after = await runplan(['status'], f);
      assert.match(after.stdout, /failed \(interrupted\)/);
      const nothing = await runplan(['stop', 'single'], f);
      assert.is(nothing.exitCode, 1);
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

test(
  "Ctrl-C at a terminal reaches the job's process group, not runplan's own git commands: no attempt fails of it (a git killed so read as the task's `commit_failed`), the receipt says interrupted, and a resume finishes",
  withTimeout(120_000, async () => {
    const f = setup('single');
    // The integrate step's `git rev-list` sends SIGINT to its parent's (runplan's) process
    // group, as a terminal's Ctrl-C does to the job, then runs git if it is still alive.
    const shim = gitShim(f.env, 'git-ctrl-c.sh', (dir) => ({
      RUNPLAN_TEST_GIT_CTRL_C: 'rev-list',
      RUNPLAN_TEST_GIT_CTRL_C_MARK: join(dir, 'sent'),
    }));
    try {
      // A process group of its own (setsid), as a shell starts a job.
      const r = await runBin('setsid', [process.execPath, RUNPLAN, 'run', f.plan], { env: shim.env, cwd: f.repo.path, timeoutMs: 110_000 });
      assert.ok(existsSync(join(shim.dir, 'sent')), 'the Ctrl-C was sent');
      assert.is(r.exitCode, 130, r.stderr);
      const rs = await records(f.repo, 'single');
      const closed = ofType(rs, 'attempt-closed');
      assert.is(closed.length, 1, JSON.stringify(closed));
      // The git command finished, so the attempt may have too (checkpointed before the stop).
      assert.ok(['success', 'interrupted'].includes(closed[0]!.outcome as string), JSON.stringify(closed[0]));
      const receipt = rs.find((x) => x.terminal === true)!;
      assert.is(receipt.type, 'run-failed');
      assert.is((receipt.data as Record<string, unknown>).class, 'interrupted');
      const again = await runplan(['run', f.plan], { env: shim.env, repo: f.repo });
      assert.is(again.exitCode, 0, again.stderr);
      assert.is(f.repo.fileAt('runplan/single', 'out/only.txt'), 'hello from only\n');
    } finally {
      shim.cleanup();
      f.cleanup();
    }
  }),
);

test(
  'SIGINT twice: one receipt, exit 130',
  withTimeout(120_000, async () => {
    const f = setup('single', {}, HOLD);
    try {
      let pid = 0;
      const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
      await waitForEvent(f.repo, 'single', 'attempt-started');
      process.kill(pid, 'SIGINT');
      process.kill(pid, 'SIGINT');
      const r = await running;
      assert.is(r.exitCode, 130, r.stderr);
      const rs = await records(f.repo, 'single');
      const terminal = rs.filter((x) => x.terminal === true);
      assert.is(terminal.length, 1);
      assert.is((terminal[0]!.data as Record<string, unknown>).class, 'interrupted');
      assert.is((terminal[0]!.data as Record<string, unknown>).signal, 'SIGINT');
      // Said as it came (two signals sent at once may arrive as one).
      assert.match(
        r.stderr,
        /^runplan: SIGINT: stopping the running attempts \(TERM, then KILL after each one's grace\), then the receipt$/m,
      );
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

test(
  'SIGUSR1 to runplan never opens Node’s inspector (a debugger port any local process, an agent too, could attach to)',
  withTimeout(120_000, async () => {
    const f = setup('single', {}, HOLD);
    try {
      let pid = 0;
      const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
      await waitForEvent(f.repo, 'single', 'attempt-started');
      process.kill(pid, 'SIGUSR1');
      // Node's inspector says so on stderr as it opens; then INT ends the run as ever.
      process.kill(pid, 'SIGINT');
      const r = await running;
      assert.is(r.exitCode, 130, r.stderr);
      assert.not.match(r.stderr, /Debugger listening|inspector/);
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

// A task whose command ignores TERM: its teardown waits out the grace before KILL.
const STUBBORN_PLAN = `slug = "stubborn"
base = "main"
[defaults]
format = "text"
deadline = "1m"
grace = "5s"

[[tasks]]
id = "deaf"
command = ["sh", "-c", "trap '' TERM; touch \\"$T/started\\"; sleep 60"]
`;

test(
  'a Ctrl-C is answered at once, and a second during the teardown is told it is under way: the attempt still gets its grace, one receipt, exit 130',
  withTimeout(90_000, async () => {
    const scratch = tempDir('runplan-stubborn-');
    const f = setup(STUBBORN_PLAN, {}, { T: scratch.path });
    try {
      const child = spawn(process.execPath, [RUNPLAN, 'run', f.plan], {
        cwd: f.repo.path,
        env: f.env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const closed = once(child, 'close');
      // Resolves once stderr says it; fails if runplan exits without saying it.
      const said = (pattern: RegExp) =>
        new Promise<void>((resolve, reject) => {
          const look = () => pattern.test(stderr) && resolve();
          child.stderr.on('data', look);
          closed.then(() => reject(new Error(`runplan exited without saying ${pattern}: ${stderr}`)));
          look();
        });
      await waitUntil('the command started', () => existsSync(join(scratch.path, 'started')));
      child.kill('SIGINT');
      await said(/^runplan: SIGINT: stopping the running attempts/m);
      const secondAt = Date.now();
      child.kill('SIGINT');
      await said(/^runplan: SIGINT again: already stopping; each attempt gets its grace, then KILL$/m);
      const [code] = await closed;
      assert.is(code, 130, stderr);
      assert.ok(Date.now() - secondAt >= 3_000, 'the second Ctrl-C did not cut the grace short');
      const rs = await records(f.repo, 'stubborn');
      assert.is(rs.filter((x) => x.terminal === true).length, 1);
      assert.equal(
        ofType(rs, 'command-settled').map((d) => [d.reason, d.signal]),
        [['interrupted', 'SIGKILL']],
      );
    } finally {
      f.cleanup();
      scratch.cleanup();
    }
  }),
);

// A task whose command says its pid, then sleeps (exec: the pid is the sleeper's).
const SLEEPER_PLAN = `slug = "sleeper"
base = "main"
[defaults]
format = "text"
deadline = "1m"
grace = "1s"

[[tasks]]
id = "nap"
command = ["sh", "-c", "echo $$ > \\"$T/pid.tmp\\"; mv \\"$T/pid.tmp\\" \\"$T/pid\\"; exec sleep 60"]
`;

// `runplan run` of a plan whose command writes its pid to $T/pid (T: a scratch dir), resolved
// once that command started; `cleanup` kills whatever is left (a stopped runplan too).
async function runUntilCommand(plan: string, opts: { detached?: boolean } = {}) {
  const scratch = tempDir('runplan-job-');
  const f = setup(plan, {}, { T: scratch.path });
  // detached: runplan leads a session of its own, its parent outside it (an orphaned group).
  // Else runplan runs as a shell runs a job: a process group of its own (perl's setpgrp, then
  // exec: the same pid) whose parent, the test, is in another group of the same session, so
  // its Ctrl-Z is honoured wherever the test itself runs (never an orphaned group).
  const argv = [process.execPath, RUNPLAN, 'run', f.plan];
  const [file, ...args] =
    opts.detached === true
      ? argv
      : ['perl', '-e', 'setpgrp(0, 0) or die "setpgrp: $!"; exec { $ARGV[0] } @ARGV or die "exec: $!"', ...argv];
  const child = spawn(file!, args, {
    cwd: f.repo.path,
    env: f.env,
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: opts.detached === true,
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const closed = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  let agent = 0;
  const cleanup = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); // stopped for good
    if (agent && alive(agent)) process.kill(agent, 'SIGKILL');
    f.cleanup();
    scratch.cleanup();
  };
  try {
    const pidFile = join(scratch.path, 'pid');
    agent = await waitUntil('the command started', () => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')));
  } catch (e) {
    cleanup();
    throw e;
  }
  return { child, closed, agent, stderr: () => stderr, cleanup };
}

const state = (pid: number) => readProcStat(pid)?.state;

test(
  'Ctrl-Z (SIGTSTP) stops the running attempts with runplan, not runplan alone; fg (SIGCONT) resumes them; Ctrl-C then ends the run, exit 130',
  withTimeout(90_000, async () => {
    const r = await runUntilCommand(SLEEPER_PLAN);
    try {
      r.child.kill('SIGTSTP');
      await waitUntil('runplan stopped', () => state(r.child.pid!) === 'T', { timeoutMs: 10_000 });
      // Its attempts run in process groups of their own: the terminal's Ctrl-Z stops runplan alone.
      await waitUntil('the attempt stopped', () => state(r.agent) === 'T', { timeoutMs: 10_000 });
      r.child.kill('SIGCONT');
      await waitUntil('the attempt resumed', () => state(r.agent) !== 'T', { timeoutMs: 10_000 });
      r.child.kill('SIGINT');
      const [code] = await r.closed;
      assert.is(code, 130, r.stderr());
      assert.not.ok(alive(r.agent), 'the attempt is gone');
    } finally {
      r.cleanup();
    }
  }),
);

test(
  'SIGTSTP to runplan in an orphaned process group (setsid, cron: no shell can resume it) is ignored, as the kernel ignores it there; a SIGINT after it ends the run, exit 130',
  withTimeout(90_000, async () => {
    const r = await runUntilCommand(SLEEPER_PLAN, { detached: true });
    try {
      // Handled in the order sent: stopped by the first, runplan would never act on the second.
      r.child.kill('SIGTSTP');
      r.child.kill('SIGINT');
      let bound: NodeJS.Timeout | undefined;
      const end = await Promise.race([
        r.closed,
        new Promise<string>((resolve) => (bound = setTimeout(() => resolve('still stopped'), 30_000))),
      ]);
      clearTimeout(bound);
      assert.equal(end, [130, null], r.stderr());
      assert.not.ok(alive(r.agent), 'the attempt is gone');
    } finally {
      r.cleanup();
    }
  }),
);

// A task that writes a line every 0.1 s for about 3 s, under a stall check of 1 s.
const TICKER_PLAN = `slug = "ticker"
base = "main"
[defaults]
format = "text"
deadline = "1m"
stall = "1s"
grace = "1s"

[[tasks]]
id = "tick"
command = ["sh", "-c", "echo $$ > \\"$T/pid.tmp\\"; mv \\"$T/pid.tmp\\" \\"$T/pid\\"; i=0; while [ $i -lt 30 ]; do echo tick $i; i=$((i+1)); sleep 0.1; done; touch ticked.txt"]
`;

test(
  "a Ctrl-Z longer than the task's stall is no stall: the attempt is held with runplan and, after fg, completes (exit 0)",
  withTimeout(90_000, async () => {
    const r = await runUntilCommand(TICKER_PLAN);
    try {
      r.child.kill('SIGTSTP');
      await waitUntil('runplan and the attempt stopped', () => state(r.child.pid!) === 'T' && state(r.agent) === 'T', {
        timeoutMs: 10_000,
      });
      // Stopped for longer than the stall period: the time passing is what is tested.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      r.child.kill('SIGCONT');
      const [code] = await r.closed;
      assert.is(code, 0, r.stderr());
      assert.not.match(r.stderr(), /stalled/);
    } finally {
      r.cleanup();
    }
  }),
);

test(
  'kill -9 of the coordinator: status says degraded (never running) with the command; --fresh abandons it (crashed attempt torn down) and starts clean',
  withTimeout(150_000, async () => {
    const f = setup('single', {}, HOLD);
    try {
      let pid = 0;
      const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
      await waitForEvent(f.repo, 'single', 'attempt-started');
      process.kill(pid, 'SIGKILL');
      const r = await running;
      assert.is(r.signal, 'SIGKILL');

      const status = await runplan(['status', 'single', '--json'], f);
      assert.is(status.exitCode, 0, status.stderr);
      const row = JSON.parse(status.stdout.trim());
      assert.is(row.state, 'degraded');
      assert.is(row.resumeCommand, `runplan run ${f.plan}`);
      const human = await runplan(['status'], f);
      assert.match(human.stdout, /degraded/);
      assert.not.match(human.stdout, /running/);
      assert.ok(human.stderr.includes(`runplan run ${f.plan}`), human.stderr);

      const env = { ...f.env, MOCK_HOLD: '' };
      const fresh = await runplan(['run', f.plan, '--fresh'], { env });
      assert.is(fresh.exitCode, 0, fresh.stderr);
      const orphan = readLedger(f.ledger)[0]!;
      assert.not.ok(alive(orphan.pid), 'the crashed attempt was torn down by its ownerTag');
      const ids = runIds(f.repo, 'single');
      assert.is(ids.length, 2);
      const { readJournal } = await import('@runplan/journal');
      const { join } = await import('node:path');
      const old = await readJournal(join(f.repo.path, '.git', 'runplan', 'single', ids[0]!, 'journal.jsonl'));
      const oldTerminal = old.records.filter((x) => x.terminal === true);
      assert.is(oldTerminal.length, 1);
      assert.is((oldTerminal[0]!.data as Record<string, unknown>).class, 'abandoned');
      // Closed as abandoned, the crashed run gives back the space its coordinator held in reserve.
      const { existsSync } = await import('node:fs');
      assert.not.ok(
        existsSync(join(f.repo.path, '.git', 'runplan', 'single', ids[0]!, 'disk-reserve')),
        'the abandoned run keeps no disk reserve',
      );
      const newer = await records(f.repo, 'single');
      assert.equal(ofType(newer, 'run-started')[0]!.abandoned, [ids[0]]);
      const after = await runplan(['status', '--json'], f);
      const last = JSON.parse(after.stdout.trim());
      assert.is(last.state, 'complete');
      assert.is(last.runs, 2);
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

test(
  'a resume after kill -9: the lock names the run it resumes (status --json coordinator.runId is a run that exists), not an id minted before it knew; log says incomplete, then running',
  withTimeout(150_000, async () => {
    const f = setup('single', {}, HOLD);
    try {
      let pid = 0;
      const crashed = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
      // Its agent running (attempt-started is journaled before the spawn), then kill -9.
      await waitUntil('the first attempt holds', () => readLedger(f.ledger).length === 1);
      process.kill(pid, 'SIGKILL');
      assert.is((await crashed).signal, 'SIGKILL');
      const [id] = runIds(f.repo, 'single');
      // Its coordinator dead: log says incomplete, its duration to its last record.
      const dead = JSON.parse((await runplan(['log', 'single', '--json'], f)).stdout.trim().split('\n')[0]!);
      assert.equal([dead.runId, dead.outcome], [id, 'incomplete']);
      // The resume takes the run over and its attempt holds again.
      let resumer = 0;
      const resumed = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (resumer = p) });
      await waitUntil('the resumed attempt holds', () => readLedger(f.ledger).length === 2);
      const status = await runplan(['status', 'single', '--json'], f);
      assert.is(status.exitCode, 0, status.stderr);
      const row = JSON.parse(status.stdout.trim());
      assert.is(row.state, 'running');
      assert.is(row.runId, id);
      assert.is(row.coordinator.pid, resumer);
      assert.is(row.coordinator.runId, id, 'the lock names the resumed run');
      // log says running, its duration to now: longer than it was when the crash left it.
      const live = JSON.parse((await runplan(['log', 'single', '--json'], f)).stdout.trim().split('\n')[0]!);
      assert.equal([live.runId, live.outcome], [id, 'running']);
      assert.ok(live.durationMs > dead.durationMs, `${live.durationMs} > ${dead.durationMs}`);
      assert.match((await runplan(['log', 'single'], f)).stdout, new RegExp(`${id} .* running `));
      assert.equal(runIds(f.repo, 'single'), [id], 'no other run was made');
      process.kill(resumer, 'SIGTERM');
      assert.is((await resumed).exitCode, 143);
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

test(
  'the journal failing: attempts torn down, exit 5, no receipt, the run left incomplete',
  withTimeout(60_000, async () => {
    const f = setup('single', {}, { RUNPLAN_FAILPOINT: 'journal-error:command-settled' });
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 5, r.stderr);
      assert.match(r.stderr, /^runplan: journal_failed: /m);
      const rs = await records(f.repo, 'single');
      assert.is(rs.filter((x) => x.terminal === true).length, 0);
      const status = await runplan(['status', '--json'], f);
      assert.is(JSON.parse(status.stdout.trim()).state, 'degraded');
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

test(
  'status of an unknown slug exits 1; status never takes the lock',
  withTimeout(30_000, async () => {
    const f = setup('single');
    try {
      const r = await runplan(['status', 'nope'], f);
      assert.is(r.exitCode, 1);
      assert.match(r.stderr, /no_such_slug/);
      const none = await runplan(['status'], f);
      assert.is(none.exitCode, 0);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'status says running only when the lock answers AND the identity names that live process (a reused pid cannot fake it)',
  withTimeout(60_000, async () => {
    const f = setup('single', {}, { RUNPLAN_FAILPOINT: 'kill-after:attempt-started' });
    try {
      const crashed = await runplan(['run', f.plan], f);
      assert.is(crashed.signal, 'SIGKILL', `exit ${crashed.exitCode}: ${crashed.stderr}`);
      const dir = slugDir(f.repo, 'single');
      const identity = join(dir, 'coordinator.json');
      const state = async () => JSON.parse((await runplan(['status', '--json'], f)).stdout.trim()).state as string;
      assert.is(await state(), 'degraded');
      // This test process takes the lock: the lock answers and the identity is alive.
      const lock = await acquireLock(dir, { identityPath: identity });
      assert.ok(lock.ok);
      try {
        assert.is(await state(), 'running');
        // Same pid, another start time (what a reused pid looks like): not running.
        const holder = JSON.parse(readFileSync(identity, 'utf8'));
        writeFileSync(identity, JSON.stringify({ ...holder, startTime: holder.startTime + 1 }));
        assert.is(await state(), 'degraded');
      } finally {
        if (lock.ok) await lock.value.release();
      }
      // The identity of a live process but no lock answering: not running either.
      const holder = JSON.parse(readFileSync(identity, 'utf8'));
      writeFileSync(identity, JSON.stringify({ ...holder, startTime: holder.startTime - 1 }));
      assert.is(await state(), 'degraded');
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

test(
  'stop exits 3 when the coordinator has not exited within --wait (its attempt ignores TERM), then a longer wait stops it',
  withTimeout(90_000, async () => {
    const f = setup('deadline', { 'deadline = "2s"': 'deadline = "60s"', 'grace = "1s"': 'grace = "20s"' });
    try {
      const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 80_000 });
      await waitForEvent(f.repo, 'deadline', 'attempt-started');
      await waitForLine(f.ledger, (l) => l.startsWith('stuck '));
      const quick = await runplan(['stop', 'deadline', '--wait', '200ms'], f);
      assert.is(quick.exitCode, 3, quick.stderr);
      assert.match(quick.stderr, /still_running: pid \d+ did not exit/);
      const patient = await runplan(['stop', 'deadline', '--wait', '60s'], f);
      assert.is(patient.exitCode, 0, patient.stderr);
      const r = await running;
      assert.is(r.exitCode, 143, r.stderr);
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

test.run();
