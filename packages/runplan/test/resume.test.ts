import { cpSync, existsSync, readdirSync, readFileSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts, readLedger, readPids, runBin, tempDir, waitUntil, withTimeout } from '@runplan/test-fixtures';
import { openWriter, readJournal } from '@runplan/journal';
import { checkpointId } from '../src/attempt/integrate.js';
import { taskContractDigests } from '../src/plan/digest.js';
import { loadPlan } from '../src/plan/load.js';
import {
  alive,
  crashOnceGrandchildRuns,
  journalPath,
  ofType,
  records,
  RUNPLAN,
  runIds,
  runplan,
  setup,
  slugDir,
  waitForEvent,
  waitForLine,
  withPlan,
} from './support.js';

function killAgents(ledger: string, pids?: string): void {
  const all = readLedger(ledger).map((e) => e.pid);
  if (pids !== undefined) all.push(...readPids(pids).map((p) => p.pid));
  for (const pid of all) {
    try {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

// The transcript path of a task's first attempt, once its attempt-started is journaled.
async function transcriptOf(f: ReturnType<typeof setup>, slug: string, task: string): Promise<string> {
  const journal = await waitForEvent(f.repo, slug, 'attempt-started');
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const { records: rs } = await readJournal(journal);
    const d = ofType(rs, 'attempt-started').find((x) => x.taskId === task);
    if (d !== undefined) return join(d.evidenceDir, 'transcript.jsonl');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no attempt-started of ${task}`);
}

// Runs the chain plan with a fail point that SIGKILLs the coordinator; returns the journal then.
async function crashAt(f: ReturnType<typeof setup>, point: string): Promise<void> {
  const r = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: `kill-after:${point}` } });
  assert.is(r.signal, 'SIGKILL', `crashed at ${point}: ${r.stderr}`);
}

test(
  'the 13-task plan: kill -9 while t07 runs, then resume: t01–t06 dispatched once, the orphan gone, t07 again, one run, one receipt',
  withTimeout(180_000, async () => {
    const scratch = tempDir('runplan-hold-');
    const f = setup('thirteen', {}, { MOCK_HOLD: 't07:1', MOCK_HOLD_SECONDS: '120' });
    try {
      let pid = 0;
      const running = runBin(RUNPLAN, ['run', f.plan, '--jobs', '1'], { env: f.env, timeoutMs: 170_000, onSpawn: (p) => (pid = p) });
      await waitForLine(f.ledger, (l) => l.startsWith('t07 '), 150_000);
      // The agent is holding once its first output line reached the transcript.
      await waitForLine(await transcriptOf(f, 'thirteen', 't07'), (l) => l.includes('"init"'));
      process.kill(pid, 'SIGKILL');
      await running;
      const orphan = readLedger(f.ledger).find((e) => e.task === 't07')!;
      assert.ok(alive(orphan.pid), 'the crashed attempt is still running before the resume');

      const r = await runplan(['run', f.plan, '--jobs', '1'], f, 170_000);
      assert.is(r.exitCode, 0, r.stderr);
      assert.not.ok(alive(orphan.pid), 'the orphaned attempt was ended');
      const counts = dispatchCounts(f.ledger);
      for (const id of ['t01', 't02', 't03', 't04', 't05', 't06']) assert.is(counts.get(id), 1, `${id} dispatched once`);
      assert.is(counts.get('t07'), 2);
      for (const id of ['t08', 't09', 't10', 't11', 't12', 't13']) assert.is(counts.get(id), 1);
      assert.is(runIds(f.repo, 'thirteen').length, 1, 'one logical run');
      const rs = await records(f.repo, 'thirteen');
      assert.is(rs.filter((x) => x.terminal === true).length, 1);
      assert.is(rs.at(-1)!.type, 'run-complete');
      const crashed = ofType(rs, 'coordinator-crashed');
      assert.is(crashed.length, 1);
      assert.equal(
        crashed[0]!.crashed.map((c: { taskId: string }) => c.taskId),
        ['t07'],
      );
      assert.is(crashed[0]!.previous.pid, pid);
      for (const id of ['t01', 't07', 't13']) assert.ok(f.repo.fileAt('runplan/thirteen', `out/${id}.txt`));
    } finally {
      killAgents(f.ledger);
      f.cleanup();
      scratch.cleanup();
    }
  }),
);

test(
  'crash-point sweep: SIGKILL after each kind of event, then resume: same branch content as an uninterrupted run, no checkpointed task dispatched twice',
  withTimeout(300_000, async () => {
    const reference = setup('chain-gated');
    let tree: string;
    try {
      const r = await runplan(['run', reference.plan], reference);
      assert.is(r.exitCode, 0, r.stderr);
      tree = reference.repo.git(['rev-parse', 'runplan/chain-gated^{tree}']);
      assert.is(reference.repo.git(['rev-parse', 'main^{tree}']), tree);
    } finally {
      reference.cleanup();
    }
    const points = [
      'attempt-started:a',
      'command-settled:a',
      'gates-done:b',
      'checkpoint:a',
      'branch-updated:a',
      'landing-started',
      'landed',
      'run-complete',
    ];
    for (const point of points) {
      const f = setup('chain-gated');
      try {
        await crashAt(f, point);
        const before = await records(f.repo, 'chain-gated');
        const checkpointed = new Set(ofType(before, 'checkpoint').map((c) => c.taskId as string));
        if (point !== 'run-complete') {
          const r = await runplan(['run', f.plan], f);
          assert.is(r.exitCode, 0, `${point}: ${r.stderr}`);
        }
        assert.is(f.repo.git(['rev-parse', 'runplan/chain-gated^{tree}']), tree, `${point}: branch content`);
        assert.is(f.repo.git(['rev-parse', 'main^{tree}']), tree, `${point}: landed content`);
        const counts = dispatchCounts(f.ledger);
        for (const task of checkpointed) assert.is(counts.get(task), 1, `${point}: ${task} was checkpointed and must not run again`);
        const rs = await records(f.repo, 'chain-gated');
        assert.is(rs.filter((x) => x.terminal === true).length, 1, `${point}: one receipt`);
        assert.is(rs.at(-1)!.type, 'run-complete');
        assert.is(runIds(f.repo, 'chain-gated').length, 1);
        // An attempt whose checkpoint is durable closes as what it was, never as interrupted.
        for (const cp of ofType(rs, 'checkpoint')) {
          const closes = ofType(rs, 'attempt-closed').filter((c) => c.taskId === cp.taskId && c.attempt === cp.attempt);
          assert.is(closes.length, 1, `${point}: attempt ${cp.taskId}#${cp.attempt} closed once`);
          assert.is(closes[0]!.outcome, 'success', `${point}: ${cp.taskId}#${cp.attempt} closed as a success`);
          assert.is(closes[0]!.checkpointId, cp.id, `${point}: with its checkpoint id`);
        }
        // After complete, git holds no worktree of the run: only the repository's own.
        const trees = f.repo
          .git(['worktree', 'list', '--porcelain'])
          .split('\n')
          .filter((l) => l.startsWith('worktree '));
        assert.equal(trees, [`worktree ${f.repo.path}`], `${point}: no worktree left`);
      } finally {
        killAgents(f.ledger);
        f.cleanup();
      }
    }
  }),
);

test(
  'a corrupt middle record: exit 3 naming offset and seq, nothing dispatched; --fresh renames it aside and starts clean',
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    await crashAt(f, 'checkpoint:b');
    const journal = journalPath(f.repo, 'chain-gated');
    const text = readFileSync(journal, 'utf8');
    const lines = text.split('\n');
    lines[3] = lines[3]!.replace('"attempt"', '"attempX"');
    writeFileSync(journal, lines.join('\n'));
    const ledgerBefore = readLedger(f.ledger).length;
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /journal_corrupt: .*offset \d+ \(seq \d+\)/);
    assert.match(r.stderr, /--fresh/);
    assert.is(readLedger(f.ledger).length, ledgerBefore, 'nothing dispatched');
    const status = await runplan(['status', '--json'], f);
    assert.is(status.exitCode, 0);
    assert.is(JSON.parse(status.stdout.trim()).state, 'corrupt');
    // What --fresh would do, read-only: a and b at attempt 2 (the corrupt run's evidence holds their 1).
    const preview = await runplan(['run', f.plan, '--fresh', '--dry-run'], f);
    assert.match(preview.stdout, /^dispatch a attempt 2$/m, preview.stdout + preview.stderr);

    const fresh = await runplan(['run', f.plan, '--fresh'], f);
    assert.is(fresh.exitCode, 0, fresh.stderr);
    assert.ok(
      readdirSync(slugDir(f.repo, 'chain-gated')).some((n) => /\.corrupt-\d{8}T\d{6}Z$/.test(n)),
      'renamed aside',
    );
    const rs = await records(f.repo, 'chain-gated');
    const started = ofType(rs, 'run-started')[0]!;
    assert.match(started.abandoned[0], /corrupt journal renamed/);
    // Attempt numbers never repeat, even past a journal that cannot be read: a and b had
    // started attempt 1 in the run set aside (its evidence says so), so they go on at 2.
    const attempts = Object.fromEntries(ofType(rs, 'attempt-started').map((d) => [d.taskId, d.attempt]));
    assert.is(attempts.a, 2);
    assert.is(attempts.b, 2);
  }),
);

test(
  'a torn tail resumes, and the repair is journaled',
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    await crashAt(f, 'checkpoint:a');
    const journal = journalPath(f.repo, 'chain-gated');
    truncateSync(journal, statSync(journal).size - 7);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const rs = await records(f.repo, 'chain-gated');
    assert.ok(
      rs.some((x) => x.type === 'journal-repaired'),
      'repair recorded',
    );
    assert.is(rs.at(-1)!.type, 'run-complete');
  }),
);

test(
  "a checkpoint's result commit unreachable and pruned: exit 3, nothing dispatched",
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    await crashAt(f, 'checkpoint:a');
    const cp = ofType(await records(f.repo, 'chain-gated'), 'checkpoint')[0]!;
    const started = ofType(await records(f.repo, 'chain-gated'), 'attempt-started')[0]!;
    f.repo.git(['worktree', 'remove', '--force', started.worktree]);
    f.repo.git(['reflog', 'expire', '--expire=now', '--all']);
    f.repo.git(['gc', '--quiet', '--prune=now']);
    assert.is(f.repo.head(cp.resultCommit), undefined, 'the commit is gone');
    const ledgerBefore = readLedger(f.ledger).length;
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /commit_missing: .*task a/);
    assert.is(readLedger(f.ledger).length, ledgerBefore);
  }),
);

test(
  'a forged checkpoint whose result does not descend from its predecessor: exit 3',
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    await crashAt(f, 'branch-updated:a');
    const rs = await records(f.repo, 'chain-gated');
    const a = ofType(rs, 'checkpoint')[0]!;
    const plan = await loadPlan(f.plan);
    assert.ok(plan.ok);
    const bDigest = plan.ok ? taskContractDigests(plan.value).get('b')! : '';
    f.repo.git(['checkout', '-q', '-b', 'elsewhere', 'main']);
    const unrelated = f.repo.commitFiles({ 'forged.txt': 'x\n' }, 'not a descendant of a');
    const key = {
      logicalRunId: a.logicalRunId,
      planDigest: a.planDigest,
      taskId: 'b',
      taskContractDigest: bDigest,
      dependencyCheckpointIds: [a.id],
      baseCommit: a.resultCommit,
      resultCommit: unrelated,
    };
    const writer = await openWriter(journalPath(f.repo, 'chain-gated'), { create: false });
    assert.ok(writer.ok);
    if (writer.ok) {
      await writer.value.append('checkpoint', { id: checkpointId(key), ...key, attempt: 1 });
      await writer.value.close();
    }
    const ledgerBefore = readLedger(f.ledger).length;
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /not_descendant: .*task b/);
    assert.is(readLedger(f.ledger).length, ledgerBefore);
  }),
);

test(
  "a completed task's prompt edited: exit 3 naming it and both digests; --fresh then works",
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    await crashAt(f, 'attempt-started:b');
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace('First part.', 'First part, reworded.'));
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /contract_changed: .*completed task a changed its contract: journaled [0-9a-f]{16}, plan now [0-9a-f]{16}/);
    assert.match(r.stderr, /--fresh/);
    const fresh = await runplan(['run', f.plan, '--fresh'], f);
    assert.is(fresh.exitCode, 0, fresh.stderr);
    assert.is(runIds(f.repo, 'chain-gated').length, 2);
  }),
);

test(
  'raising jobs after a crash resumes, journaled as plan-amended',
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    await crashAt(f, 'checkpoint:a');
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace('land = "main"', 'land = "main"\njobs = 4'));
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const rs = await records(f.repo, 'chain-gated');
    const amended = ofType(rs, 'plan-amended');
    assert.is(amended.length, 1);
    assert.is(amended[0]!.jobs, 4);
    assert.is(dispatchCounts(f.ledger).get('a'), 1);
  }),
);

// Two tasks side by side, then one that needs both; each writes its file after a while.
const PAIR_PLAN = `slug = "pair"
base = "main"
jobs = 2
[defaults]
format = "text"
deadline = "1m"
grace = "1s"

[[tasks]]
id = "a"
command = ["sh", "-c", "sleep 1; echo a > a.txt"]

[[tasks]]
id = "b"
command = ["sh", "-c", "sleep 1; echo b > b.txt"]

[[tasks]]
id = "c"
needs = ["a", "b"]
command = ["sh", "-c", "echo c > c.txt"]
`;

test(
  'a continuation resumed after a crash removes the worktrees of the run it continues too: none is left registered once the run completes',
  withTimeout(120_000, async () => {
    const f = setup(PAIR_PLAN);
    try {
      // Run 1: interrupted while a and b run (their worktrees stay, as evidence).
      let pid = 0;
      const first = runBin(RUNPLAN, ['run', f.plan], { env: f.env, cwd: f.repo.path, timeoutMs: 60_000, onSpawn: (p) => (pid = p) });
      await waitUntil(
        'a and b started',
        async () => runIds(f.repo, 'pair').length === 1 && ofType(await records(f.repo, 'pair'), 'attempt-started').length === 2,
      );
      process.kill(pid, 'SIGINT');
      assert.is((await first).exitCode, 130);
      // Run 2, its continuation: killed once b started again.
      const crashed = await runplan(['run', f.plan], {
        env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:attempt-started:b' },
        repo: f.repo,
      });
      assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
      assert.is(runIds(f.repo, 'pair').length, 2);
      // Run 2 resumed: it completes, and every earlier attempt's worktree goes.
      const resumed = await runplan(['run', f.plan], f);
      assert.is(resumed.exitCode, 0, resumed.stderr);
      const listed = f.repo
        .git(['worktree', 'list', '--porcelain'])
        .split('\n')
        .filter((l) => l.startsWith('worktree '));
      assert.equal(listed, [`worktree ${f.repo.path}`], listed.join('\n'));
    } finally {
      f.cleanup();
    }
  }),
);

test(
  '--new-run with an incomplete run is refused (incomplete_run), run and --dry-run alike, nothing started; the plain command resumes it',
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    await crashAt(f, 'checkpoint:a');
    const [id] = runIds(f.repo, 'chain-gated');
    const preview = await runplan(['run', f.plan, '--new-run', '--dry-run'], f);
    assert.is(preview.exitCode, 3, preview.stdout + preview.stderr);
    assert.match(preview.stdout, /^refuse incomplete_run$/m);
    const r = await runplan(['run', f.plan, '--new-run'], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.ok(
      r.stderr.includes(`runplan: incomplete_run: slug chain-gated has an incomplete run (${id}): --new-run starts no run beside it`),
      r.stderr,
    );
    assert.match(r.stderr, /hint: resume it: runplan run \S+ {3}\(or --fresh to abandon it and start a new run\)/);
    assert.equal(runIds(f.repo, 'chain-gated'), [id], 'no run started');
    const resumed = await runplan(['run', f.plan], f);
    assert.is(resumed.exitCode, 0, resumed.stderr);
    assert.equal(runIds(f.repo, 'chain-gated'), [id], 'the same run, resumed');
  }),
);

test(
  'two incomplete runs: exit 3 listing both; --run ID resumes the named one',
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    await crashAt(f, 'checkpoint:a');
    const [first] = runIds(f.repo, 'chain-gated');
    const second = first!.replace(/-[0-9a-f]+$/, '-ffffffff');
    cpSync(join(slugDir(f.repo, 'chain-gated'), first!), join(slugDir(f.repo, 'chain-gated'), second), { recursive: true });
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, /several_incomplete_runs/);
    assert.ok(r.stderr.includes(first!) && r.stderr.includes(second), r.stderr);
    assert.match(r.stderr, /--run /);
    const picked = await runplan(['run', f.plan, '--run', first!], f);
    assert.is(picked.exitCode, 0, picked.stderr);
    const done = await readJournal(join(slugDir(f.repo, 'chain-gated'), first!, 'journal.jsonl'));
    assert.is(done.records.at(-1)!.type, 'run-complete');
  }),
);

test(
  'a stuck worker (TERM-ignoring, with a grandchild) of a killed coordinator is gone before the new attempt starts',
  withTimeout(120_000, async () => {
    const scratch = tempDir('runplan-stuck-');
    const pids = join(scratch.path, 'pids');
    const f = setup('stuck-once', {}, { MOCK_PIDS: pids });
    try {
      await crashOnceGrandchildRuns(f, pids);
      const old = [readLedger(f.ledger)[0]!.pid, ...readPids(pids).map((p) => p.pid)];
      for (const p of old) assert.ok(alive(p), `${p} still runs before the resume`);
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      for (const p of old) assert.not.ok(alive(p), `${p} was ended`);
      const rs = await records(f.repo, 'stuck-once');
      const crashedAt = rs.findIndex((x) => x.type === 'coordinator-crashed');
      const retried = rs.findIndex((x) => x.type === 'attempt-started' && (x.data as { attempt: number }).attempt === 2);
      assert.ok(crashedAt >= 0 && crashedAt < retried, 'teardown is recorded before the new attempt starts');
      assert.equal(ofType(rs, 'coordinator-crashed')[0]!.crashed[0].survivors, []);
    } finally {
      killAgents(f.ledger, pids);
      f.cleanup();
      scratch.cleanup();
    }
  }),
);

test(
  'stop, then run: a continuation adopts the finished tasks (no redispatch) and runs the rest',
  withPlan('chain-gated', { timeoutMs: 120_000, env: { MOCK_HOLD: 'b', MOCK_HOLD_SECONDS: '100' } }, async (f) => {
    const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000 });
    await waitForLine(f.ledger, (l) => l.startsWith('b '));
    const stop = await runplan(['stop', 'chain-gated'], f);
    assert.is(stop.exitCode, 0, stop.stderr);
    assert.is((await running).exitCode, 143);
    const r = await runplan(['run', f.plan], { env: { ...f.env, MOCK_HOLD: '' } });
    assert.is(r.exitCode, 0, r.stderr);
    const ids = runIds(f.repo, 'chain-gated');
    assert.is(ids.length, 2);
    const rs = await records(f.repo, 'chain-gated');
    assert.is(ofType(rs, 'run-started')[0]!.continues, ids[0]);
    assert.equal(
      ofType(rs, 'checkpoint-adopted').map((c) => c.taskId),
      ['a'],
    );
    const counts = dispatchCounts(f.ledger);
    assert.is(counts.get('a'), 1, 'a was adopted, not redispatched');
    assert.is(counts.get('b'), 2);
    assert.ok(f.repo.fileAt('main', 'out/b.txt'));
    const status = JSON.parse((await runplan(['status', '--json'], f)).stdout.trim());
    assert.is(status.runs, 2);
    assert.is(status.state, 'complete');
    assert.ok(existsSync(journalPath(f.repo, 'chain-gated')));
  }),
);

test(
  'usage a crashed attempt reported still counts: recounted from its saved transcript on resume',
  withTimeout(120_000, async () => {
    const plan = `slug = "recount"
base = "main"
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
grace = "1s"
[[tasks]]
id = "spend"
prompt = """
mock: on-attempt 1 usage 500 100 0 0
mock: on-attempt 1 turn
mock: on-attempt 1 sleep 600
mock: write out/spend.txt done
"""
`;
    const f = setup(plan);
    try {
      let pid = 0;
      const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
      await waitForLine(f.ledger, (l) => l.startsWith('spend '));
      await waitForLine(await transcriptOf(f, 'recount', 'spend'), (l) => l.includes('"assistant"') && l.includes('"input_tokens":500'));
      process.kill(pid, 'SIGKILL');
      await running;
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      const rs = await records(f.repo, 'recount');
      const recounted = ofType(rs, 'usage');
      assert.is(recounted.length, 1);
      assert.is(recounted[0]!.usage.inputTokens, 500);
      const receiptData = rs.at(-1)!.data as { usage: { inputTokens: number } };
      assert.is(receiptData.usage.inputTokens, 500 + 100);
    } finally {
      killAgents(f.ledger);
      f.cleanup();
    }
  }),
);

test(
  'coordinator crashes have their own cap per task: the third crash during one task ends it with class engine',
  withPlan('chain-gated', { timeoutMs: 120_000 }, async (f) => {
    for (let i = 0; i < 3; i++) await crashAt(f, 'attempt-started:a');
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    const rs = await records(f.repo, 'chain-gated');
    const terminal = rs.filter((x) => x.terminal === true);
    assert.is(terminal.length, 1);
    const data = terminal[0]!.data as Record<string, unknown>;
    assert.is(data.class, 'engine');
    assert.is(data.reason, 'crash_cap_exhausted');
    assert.is(data.task, 'a');
    assert.is(ofType(rs, 'coordinator-crashed').length, 3);
    assert.is(ofType(rs, 'repair-decided').length, 0, 'crashes do not use the repair cap');
  }),
);

test.run();
