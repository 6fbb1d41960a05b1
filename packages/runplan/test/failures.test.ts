import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  dispatchCounts,
  envWithAgents,
  gateCounts,
  readLedger,
  readPids,
  savedPrompts,
  shFixture,
  tempDir,
  waitUntil,
  withTimeout,
} from '@runplan/test-fixtures';
import { gitShim } from './git-shim.js';
import { alive, ofType, records, runplan, setup } from './support.js';

// The one receipt of a failed run.
async function failedReceipt(f: ReturnType<typeof setup>, slug: string): Promise<Record<string, any>> {
  const rs = await records(f.repo, slug);
  const terminal = rs.filter((r) => r.terminal === true);
  assert.is(terminal.length, 1, 'exactly one terminal record');
  assert.is(terminal[0]!.type, 'run-failed');
  return terminal[0]!.data as Record<string, any>;
}

test(
  'pre_run fails: the command is never spawned, reason pre_run_failed, class environment',
  withTimeout(60_000, async () => {
    const f = setup('pre-run-fail');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      assert.is(readLedger(f.ledger).length, 0, 'the ledger proves no spawn');
      const receipt = await failedReceipt(f, 'pre-run-fail');
      assert.is(receipt.reason, 'pre_run_failed');
      assert.is(receipt.class, 'environment');
      assert.is(receipt.phase, 'pre_run');
      assert.is(receipt.task, 'never');
      assert.match(r.stderr, /pre_run_failed: task never, phase pre_run, class environment/);
      assert.match(r.stderr, /evidence: .*pre_run\.log/);
      const rs = await records(f.repo, 'pre-run-fail');
      assert.is(ofType(rs, 'command-settled').length, 0);
      assert.is(ofType(rs, 'post-run-done').length, 0, 'post_run does not run after a failed pre_run');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  "a pre_run hook that ignores TERM past hooks.timeout is killed after the task's grace, not settle's 5 s",
  withTimeout(60_000, async () => {
    const plan = `slug = "hookgrace"
base = "main"
[hooks]
pre_run = ["${shFixture('ignore-term.sh')}"]
timeout = "1s"
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
grace = "100ms"
[[tasks]]
id = "stubborn"
`;
    const f = setup(plan);
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      assert.match(r.stderr, /pre_run timed_out: .*passed its 1s deadline and was torn down \(escalated\)/);
      const done = ofType(await records(f.repo, 'hookgrace'), 'pre-run-done');
      assert.is(done.length, 1);
      // 1 s deadline + 100 ms grace (+ the reap); settle's own 5 s grace would make it over 6 s.
      assert.ok(done[0]!.durationMs < 4000, `the hook took ${done[0]!.durationMs}ms to settle`);
      assert.is(readLedger(f.ledger).length, 0, 'the command never ran');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  "a task's env value never reaches a hook",
  withTimeout(60_000, async () => {
    const plan = `slug = "hookenv"
base = "main"
[hooks]
pre_run = ["env"]
post_run = ["env"]
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
[[tasks]]
id = "envy"
env = { GREETING = "hello-from-task-env" }
prompt = """
mock: env-to out/env.txt GREETING
"""
`;
    const minimal = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
    const f = setup(plan);
    try {
      const env = envWithAgents({ MOCK_LEDGER: f.ledger }, minimal);
      const r = await runplan(['run', f.plan], { env });
      assert.is(r.exitCode, 0, r.stderr);
      assert.match(f.repo.fileAt('runplan/hookenv', 'out/env.txt') ?? '', /GREETING=hello-from-task-env/, 'the command got it');
      const rs = await records(f.repo, 'hookenv');
      for (const type of ['pre-run-done', 'post-run-done']) {
        const log = readFileSync(ofType(rs, type)[0]!.evidence, 'utf8');
        assert.match(log, /HARNESS_TASK_ID=envy/, `${type}: the hook env dump is there`);
        assert.not.match(log, /hello-from-task-env/, `${type}: the task env is not`);
        assert.not.match(log, /GREETING/);
      }
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'post_run demotes a successful command: run fails, post_run_failed, nothing integrated',
  withTimeout(60_000, async () => {
    const f = setup('post-run-fail');
    try {
      const before = f.repo.head('main');
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const receipt = await failedReceipt(f, 'post-run-fail');
      assert.is(receipt.reason, 'post_run_failed');
      assert.is(receipt.class, 'gate');
      assert.is(receipt.phase, 'post_run');
      const rs = await records(f.repo, 'post-run-fail');
      assert.is(ofType(rs, 'command-settled')[0]!.exitCode, 0);
      assert.is(ofType(rs, 'integrated').length, 0);
      assert.is(ofType(rs, 'checkpoint').length, 0);
      assert.is(f.repo.head('runplan/post-run-fail'), before, 'the branch still points at base');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'a post_run hook that cannot be started: spawn_failed, class environment, the agent not sent round again; --dry-run names it',
  withTimeout(60_000, async () => {
    const f = setup('post-run-fail', {
      '"mock-gate", "--label", "post_run", "1", "post_run: outcome {{run.outcome}} rejected"': '"no-such-hook", "{{run.outcome}}"',
    });
    try {
      const preview = await runplan(['run', f.plan, '--dry-run'], f);
      assert.is(preview.exitCode, 0, preview.stderr);
      assert.match(preview.stderr, /command_not_found: task demoted: "no-such-hook" is not on the PATH/);
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const receipt = await failedReceipt(f, 'post-run-fail');
      assert.equal([receipt.reason, receipt.class, receipt.phase], ['spawn_failed', 'environment', 'post_run']);
      assert.match(receipt.message, /post_run hook could not be started: .*no-such-hook.*ENOENT/);
      assert.is(readLedger(f.ledger).length, 1, 'dispatched once: a missing hook is not the agent’s to fix');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'zero diff fails (class task, zero_diff) unless expect = "none"',
  withTimeout(90_000, async () => {
    const f = setup('zero-diff');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const receipt = await failedReceipt(f, 'zero-diff');
      assert.is(receipt.class, 'task');
      assert.is(receipt.phase, 'commit');
      // The same zero diff twice: retried once with the evidence, then never again.
      assert.is(receipt.reason, 'repeated_failure');
      assert.is(readLedger(f.ledger).length, 2);
      const closed = ofType(await records(f.repo, 'zero-diff'), 'attempt-closed');
      assert.equal(
        closed.map((c) => c.reason),
        ['zero_diff', 'zero_diff'],
      );
    } finally {
      f.cleanup();
    }
    const g = setup('zero-diff', { 'expect = "commit"': 'expect = "none"' });
    try {
      const r = await runplan(['run', g.plan], g);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(g.repo.head('runplan/zero-diff'), g.repo.head('main'));
      const rs = await records(g.repo, 'zero-diff');
      assert.is(ofType(rs, 'checkpoint').length, 1);
      assert.is(ofType(rs, 'integrated')[0]!.mode, 'unchanged');
    } finally {
      g.cleanup();
    }
  }),
);

test(
  'a failing gate: class gate, reason gate_failed, gate output kept as evidence',
  withTimeout(60_000, async () => {
    const prompts = tempDir('runplan-prompts-');
    const f = setup('gate-fail', {}, { MOCK_PROMPTS: prompts.path });
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const receipt = await failedReceipt(f, 'gate-fail');
      assert.is(receipt.class, 'gate');
      assert.is(receipt.reason, 'repeated_failure', 'the same gate failure twice is not dispatched a third time');
      assert.is(receipt.phase, 'gates');
      assert.is(readLedger(f.ledger).length, 2);
      const decided = ofType(await records(f.repo, 'gate-fail'), 'repair-decided');
      assert.equal(
        decided.map((d) => d.action),
        ['retry', 'stop'],
      );
      assert.is(decided[0]!.fingerprint, decided[1]!.fingerprint);
      const second = savedPrompts(prompts.path, 'checked')[1]!;
      assert.match(second, /runplan: attempt 1 of this task failed/);
      assert.match(second, /reason: gate_failed/);
      assert.match(second, /\| .*gate says no: 2 checks failed/);
      const gateLog = receipt.evidence.find((p: string) => p.endsWith('gate-1.log'));
      assert.ok(gateLog, 'the gate log is named in the receipt');
      assert.match(readFileSync(gateLog, 'utf8'), /gate says no: 2 checks failed/);
      assert.match(r.stderr, /gate-1\.log/);
      // A failed attempt's worktree stays as evidence.
      const started = ofType(await records(f.repo, 'gate-fail'), 'attempt-started')[0]!;
      assert.ok(existsSync(join(started.worktree, 'out', 'checked.txt')));
    } finally {
      f.cleanup();
      prompts.cleanup();
    }
  }),
);

test(
  'parallel tasks: the later one rebases onto the moved head and re-runs its gates',
  withTimeout(60_000, async () => {
    const scratch = tempDir('runplan-gates-');
    const f = setup('parallel-rebase', {}, { MOCK_GATE_LEDGER: join(scratch.path, 'gates') });
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      const rs = await records(f.repo, 'parallel-rebase');
      const integrated = new Map(ofType(rs, 'integrated').map((d) => [d.taskId, d]));
      assert.is(integrated.get('fast')!.mode, 'fast_forward');
      assert.is(integrated.get('slow')!.mode, 'rebase');
      assert.is(gateCounts(join(scratch.path, 'gates')).get('slow-gate'), 2, 'the gate ran again after the rebase');
      assert.equal(
        ofType(rs, 'gates-done').map((d) => d.phase),
        ['gates', 'integrate'],
      );
      assert.is(f.repo.fileAt('runplan/parallel-rebase', 'out/fast.txt'), 'fast\n');
      assert.is(f.repo.fileAt('runplan/parallel-rebase', 'out/slow.txt'), 'slow\n');
      assert.is(f.repo.git(['rev-list', '--count', 'main..runplan/parallel-rebase']), '2');
    } finally {
      f.cleanup();
      scratch.cleanup();
    }
  }),
);

test(
  'a rebase that is killed (it never exits): rebase_failed, class environment, never retried; the branch keeps the first result',
  withTimeout(60_000, async () => {
    const scratch = tempDir('runplan-gates-');
    const f = setup('parallel-rebase', {}, { MOCK_GATE_LEDGER: join(scratch.path, 'gates') });
    const shim = gitShim(f.env, 'git-kill.sh', () => ({ RUNPLAN_TEST_GIT_KILL: 'rebase' }));
    try {
      const r = await runplan(['run', f.plan], { env: shim.env });
      assert.is(r.exitCode, 1, r.stderr);
      const receipt = await failedReceipt(f, 'parallel-rebase');
      assert.is(receipt.reason, 'rebase_failed');
      assert.is(receipt.class, 'environment');
      assert.is(receipt.phase, 'integrate');
      assert.is(receipt.task, 'slow');
      assert.match(r.stderr, /runplan: rebase_failed: task slow, phase integrate, class environment: git rebase [0-9a-f]{12}: signaled/);
      const log = receipt.evidence.find((p: string) => p.endsWith('rebase.log'));
      assert.ok(log !== undefined && existsSync(log), 'the rebase log is evidence');
      assert.is(
        ofType(await records(f.repo, 'parallel-rebase'), 'attempt-started').filter((a) => a.taskId === 'slow').length,
        1,
        'not retried',
      );
      assert.is(f.repo.fileAt('runplan/parallel-rebase', 'out/fast.txt'), 'fast\n');
      assert.is(f.repo.git(['rev-list', '--count', 'main..runplan/parallel-rebase']), '1');
    } finally {
      shim.cleanup();
      f.cleanup();
      scratch.cleanup();
    }
  }),
);

test(
  'an integration conflict: class integration, reason integration_conflict, branch keeps the first result',
  withTimeout(60_000, async () => {
    const f = setup('conflict', { 'jobs = 2': 'jobs = 2\n[repair]\nintegration = 1' });
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const receipt = await failedReceipt(f, 'conflict');
      assert.is(receipt.class, 'integration');
      assert.is(receipt.reason, 'integration_conflict');
      assert.is(receipt.phase, 'integrate');
      // Whichever of the two integrates second conflicts; the branch keeps the first.
      const first = receipt.task === 'right' ? 'left' : 'right';
      assert.ok(['left', 'right'].includes(receipt.task));
      assert.is(f.repo.fileAt('runplan/conflict', 'README.md'), `# fixture repo, as ${first} wants it\n`);
      assert.is(ofType(await records(f.repo, 'conflict'), 'checkpoint').length, 1);
    } finally {
      f.cleanup();
    }
    // With the default cap the conflicting task is dispatched again from the new head.
    const g = setup('conflict');
    try {
      const r = await runplan(['run', g.plan], g);
      assert.is(r.exitCode, 0, r.stderr);
      const decided = ofType(await records(g.repo, 'conflict'), 'repair-decided');
      assert.is(decided.length, 1);
      assert.is(decided[0]!.changed, 'base');
      const again = decided[0]!.taskId as string;
      assert.is(dispatchCounts(g.ledger).get(again), 2);
      assert.is(readLedger(g.ledger).length, 3);
      assert.is(g.repo.fileAt('runplan/conflict', 'README.md'), `# fixture repo, as ${again} wants it\n`);
    } finally {
      g.cleanup();
    }
  }),
);

test(
  'landing fast-forwards the land branch; a branch moved by someone else is not forced',
  withTimeout(90_000, async () => {
    const f = setup('land');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(f.repo.head('main'), f.repo.head('runplan/land'));
      assert.is(f.repo.fileAt('main', 'out/second.txt'), 'second\n');
      // main is checked out in the repo: its files and index followed (no phantom reverts).
      assert.is(readFileSync(join(f.repo.path, 'out', 'second.txt'), 'utf8'), 'second\n');
      assert.is(f.repo.git(['status', '--porcelain', '--untracked-files=no']), '');
      const rs = await records(f.repo, 'land');
      assert.is(ofType(rs, 'landing-started').length, 1);
      assert.is(ofType(rs, 'landed').length, 1);
      assert.is(rs.at(-1)!.type, 'run-complete');
      assert.is((rs.at(-1)!.data as Record<string, unknown>).landed, 'refs/heads/main');
    } finally {
      f.cleanup();
    }
    // Someone commits to main while the run works: landing must fail and leave main alone.
    const g = setup('land');
    try {
      const moved = g.repo.commitFiles({ 'elsewhere.txt': 'x\n' }, 'someone else');
      // base = "main" is resolved at start: point the plan at the old commit so main has moved on.
      writeFileSync(g.plan, readFileSync(g.plan, 'utf8').replace('base = "main"', `base = "${g.repo.head('main~1')}"`));
      // Checked before any work now: refused (exit 3), nothing dispatched (land-check.test.ts
      // has the same failure after dispatch, class integration).
      const r = await runplan(['run', g.plan], g);
      assert.is(r.exitCode, 3, r.stderr);
      assert.match(r.stderr, /^runplan: land_moved: /m);
      assert.is(readLedger(g.ledger).length, 0);
      assert.is(g.repo.head('main'), moved, 'main was not forced');
    } finally {
      g.cleanup();
    }
    // A checked-out land branch with uncommitted changes is not touched.
    const h = setup('land');
    try {
      // Edited while the run works (before any work it is refused: land-check.test.ts).
      const holdFile = join(h.ledger + '.hold');
      writeFileSync(holdFile, '');
      const before = h.repo.head('main');
      const running = runplan(['run', h.plan], { env: { ...h.env, MOCK_HOLD: 'second', MOCK_HOLD_FILE: holdFile } });
      await waitUntil('second is dispatched', () => readLedger(h.ledger).some((e) => e.task === 'second'), { timeoutMs: 60_000 });
      writeFileSync(join(h.repo.path, 'README.md'), 'local edit\n');
      rmSync(holdFile);
      const r = await running;
      assert.is(r.exitCode, 1, r.stderr);
      const receipt = await failedReceipt(h, 'land');
      assert.is(receipt.reason, 'land_checked_out');
      assert.is(receipt.class, 'integration');
      assert.is(h.repo.head('main'), before);
      assert.is(readFileSync(join(h.repo.path, 'README.md'), 'utf8'), 'local edit\n');
    } finally {
      h.cleanup();
    }
  }),
);

for (const [plan, reason] of [
  ['deadline', 'timed_out'],
  ['stall', 'stalled'],
] as const) {
  test(
    `${plan}: a TERM-ignoring agent and its grandchild are both gone, class timeout (${reason})`,
    withTimeout(90_000, async () => {
      const scratch = tempDir('runplan-pids-');
      const pids = join(scratch.path, 'pids');
      const f = setup(plan, {}, { MOCK_PIDS: pids });
      try {
        const r = await runplan(['run', f.plan], f);
        assert.is(r.exitCode, 1, r.stderr);
        const receipt = await failedReceipt(f, plan);
        assert.is(receipt.class, 'timeout');
        assert.is(receipt.reason, reason);
        assert.is(receipt.phase, 'command');
        const agent = readLedger(f.ledger)[0]!;
        const grandchildren = readPids(pids);
        assert.ok(grandchildren.length >= 1, 'the agent started a grandchild');
        assert.not.ok(alive(agent.pid), `agent ${agent.pid} is gone`);
        for (const g of grandchildren) assert.not.ok(alive(g.pid), `grandchild ${g.pid} is gone`);
        const settled = ofType(await records(f.repo, plan), 'command-settled')[0]!;
        assert.is(settled.reason, reason);
      } finally {
        f.cleanup();
        scratch.cleanup();
      }
    }),
  );
}

test.run();
