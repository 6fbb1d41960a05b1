import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir } from '@runplan/test-fixtures';
import type { JournalRecord } from '@runplan/journal';
import { fit, footer, Progress, SafeOutput } from '../src/observe/progress.js';
import { clockOf } from '../src/observe/table.js';
import { HOSTILE, HOSTILE_PLAN } from './hostile.js';
import { records, RUNPLAN, runplan, waitUntil, withPlan } from './support.js';

// N quick tasks (a shell that sleeps a little, so the table is redrawn many times).
function manyTasks(n: number): string {
  const tasks = Array.from({ length: n }, (_, i) => `[[tasks]]\nid = "task-${String(i + 1).padStart(2, '0')}"\n`).join('\n');
  return `slug = "many"\nbase = "main"\n[defaults]\ncommand = ["/bin/sh", "-c", "sleep 0.05"]\nformat = "text"\nexpect = "none"\n\n${tasks}`;
}

// Runs `runplan run PLAN` in a detached tmux pane of the given size, as a person would, and
// returns the whole pane with its scrollback once the command has exited (wrapped lines joined).
async function inTmux(
  size: { columns: number; rows: number },
  f: { plan: string; env: Record<string, string> },
  during?: (screen: () => Promise<string>) => Promise<void>,
): Promise<{ screen: string; title: string }> {
  const dir = tempDir('runplan-tmux-');
  const socket = join(dir.path, 'sock');
  const env = { ...f.env, TERM: 'xterm-256color' };
  const tmux = (args: string[]) => runBin('tmux', ['-S', socket, '-f', '/dev/null', ...args], { env, timeoutMs: 20_000 });
  try {
    const started = await tmux([
      'new-session',
      '-d',
      '-x',
      String(size.columns),
      '-y',
      String(size.rows),
      process.execPath,
      RUNPLAN,
      'run',
      f.plan,
    ]);
    assert.is(started.exitCode, 0, started.stderr);
    // Keep the pane (and its scrollback) after the command exits; history deep enough for every copy.
    await tmux(['set-option', '-g', 'remain-on-exit', 'on']);
    await tmux(['set-option', '-g', 'history-limit', '100000']);
    // What the window shows now (while the run is still going).
    if (during !== undefined) await during(async () => (await tmux(['capture-pane', '-p', '-J'])).stdout);
    await waitUntil(
      'the run in tmux exits',
      async () => {
        const r = await tmux(['display-message', '-p', '#{pane_dead}']);
        return r.stdout.trim() === '1' || (r.exitCode !== 0 && r.stderr.includes('no server'));
      },
      { timeoutMs: 100_000, everyMs: 100 },
    );
    const screen = await tmux(['capture-pane', '-p', '-J', '-S', '-']);
    assert.is(screen.exitCode, 0, screen.stderr);
    const title = await tmux(['display-message', '-p', '#{pane_title}']);
    return { screen: screen.stdout, title: title.stdout.trim() };
  } finally {
    await tmux(['kill-server']);
    dir.cleanup();
  }
}

// What a person sees: the table once at the end, before the summary; never a wrapped row.
function checkScreen(screen: string, columns: number): void {
  // tmux's own note under a pane kept after its command exited is not runplan's output.
  const lines = screen.split('\n').filter((l) => !l.startsWith('Pane is dead'));
  const summary = lines.findIndex((l) => l.startsWith('runplan: complete'));
  assert.ok(summary > 0, `the summary is on screen:\n${screen}`);
  // The table is redrawn, so a wrapped row would leave broken copies; the summary (paths to copy whole) may wrap.
  const wide = lines.slice(0, summary).filter((l) => l.length > columns);
  assert.equal(wide, [], `no line is wider than the window (${columns}):\n${wide.join('\n')}`);
  const headers = lines.filter((l) => /^TASK\s+STATE/.test(l)).length;
  assert.ok(headers >= 1 && headers <= 2, `the header appears ${headers} times:\n${screen}`);
  const lastHeader = lines.findLastIndex((l) => /^TASK\s+STATE/.test(l));
  assert.ok(lastHeader < summary, `the final table comes before the summary, not after it:\n${screen}`);
  assert.is(lines.filter((l) => l.startsWith('runplan: complete')).length, 1);
  // The footer closes the final table, and is redrawn in place like the rest (never a copy per draw).
  const footers = lines.filter((l) => /^\d+ done · \d+ running · /.test(l)).length;
  assert.ok(footers >= 1 && footers <= 2, `the footer appears ${footers} times:\n${screen}`);
  assert.match(lines[summary - 1]!, /^\d+ done · 0 running · 0 failed/, `the footer is the table's last line:\n${screen}`);
}

// Three tasks that report spend (the mock agent's default for the one that exits 3: 100/20 tokens,
// $0.01), one of them failing for good, under a budget; the run goes on past the failure.
const FOOTER_PLAN = `slug = "footer"
base = "main"
keep_going = true
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
deadline = "1m"
grace = "2s"
[budget]
max_tokens = 10000
max_cost_usd = 1.0

[[tasks]]
id = "spend-a"
prompt = """
mock: usage 600 200 100 100 0.05
mock: write out/a.txt one
"""

[[tasks]]
id = "broken"
repair = { task = 1 }
prompt = """
mock: exit 3
"""

[[tasks]]
id = "spend-b"
prompt = """
mock: usage 300 100 50 50 0.02
mock: write out/b.txt two
"""
`;

for (const size of [
  { columns: 100, rows: 30 },
  { columns: 40, rows: 15 },
]) {
  test(
    `in tmux at ${size.columns}×${size.rows}: 40 tasks fit the window, redrawn in place, the final table once before the summary`,
    withPlan(manyTasks(40), { timeoutMs: 150_000 }, async (f) => {
      const { screen } = await inTmux(size, f);
      checkScreen(screen, size.columns);
      // The window cannot hold 41 rows: finished tasks are folded into one line.
      assert.match(screen, /\+\d+ done/);
    }),
  );
}

test('a wait that ends on another UTC day is shown with its date; one that ends today is not', () => {
  const now = Date.parse('2026-12-01T23:30:00Z');
  assert.is(clockOf('2026-12-01T23:59:59Z', now), '23:59:59 UTC');
  assert.is(clockOf('2026-12-02T00:30:00Z', now), '2026-12-02 00:30:00 UTC');
  assert.is(clockOf('not a time', now), 'not a time');
});

test(
  'in tmux: a run resumed after a crash counts the tasks done before it as done, not queued',
  withPlan(manyTasks(8), { timeoutMs: 150_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:checkpoint:task-05' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const { screen } = await inTmux({ columns: 100, rows: 30 }, f);
    checkScreen(screen, 100);
    assert.match(screen, /^task-01\s+done\s+1\s/m, screen);
    assert.match(screen, /^8 done · 0 running · 0 failed · 0 queued$/m, screen);
  }),
);

test(
  'in tmux: the footer counts the tasks, holds the spend against the budget and names the first failure with its evidence',
  withPlan(FOOTER_PLAN, { timeoutMs: 120_000 }, async (f) => {
    const { screen } = await inTmux({ columns: 200, rows: 30 }, f);
    const lines = screen.split('\n');
    const summary = lines.findIndex((l) => l.startsWith('runplan: exited: task broken'));
    assert.ok(summary > 0, `the summary is on screen:\n${screen}`);
    assert.match(
      lines[summary - 2]!,
      /^2 done · 0 running · 1 failed · 0 queued · 1\.6k of 10k tokens · \$0\.0800 of \$1\.00 · budget left 8\.4k tokens, \$0\.9200$/,
      screen,
    );
    assert.match(lines[summary - 1]!, /^first failure: broken #1 exited · \/\S+\/evidence\/broken\.1$/, screen);
    // Each task's own spend, in the table's TOKENS and COST columns.
    assert.match(screen, /^TASK\s+STATE\s+ATTEMPT\s+ELAPSED\s+TOKENS\s+COST$/m);
    assert.match(screen, /^spend-a\s+done\s+1\s+\d+s\s+1\.0k\s+\$0\.0500$/m);
    assert.match(screen, /^broken\s+failed \(exited\)\s+1\s+\d+s\s+120\s+\$0\.0100$/m);
  }),
);

// One task whose agent reports a turn's usage and then waits for the test (the file RELEASE).
const LIVE_PLAN = (release: string) => `slug = "live"
base = "main"
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
deadline = "2m"
expect = "none"

[[tasks]]
id = "thinking"
prompt = """
mock: usage 600 200 100 100 0.05
mock: turn
mock: wait-file ${release}
"""
`;

test("in tmux: a running agent's tokens so far show in its row and the footer before its command settles (at most once a second, never journaled)", async () => {
  const dir = tempDir('runplan-live-');
  const release = join(dir.path, 'release');
  try {
    await withPlan(LIVE_PLAN(release), { timeoutMs: 120_000 }, async (f) => {
      const { screen } = await inTmux({ columns: 120, rows: 20 }, f, async (now) => {
        // The assistant message's usage (1000 tokens) while the agent still runs.
        await waitUntil(
          'the running row shows the tokens so far',
          async () => /^thinking\s+running\s+1\s+\d+s\s+1\.0k\s/m.test(await now()),
          {
            timeoutMs: 60_000,
            everyMs: 100,
          },
        );
        assert.match(await now(), /^0 done · 1 running · 0 failed · 0 queued · 1\.0k tokens/m);
        writeFileSync(release, '');
      });
      assert.match(screen, /^thinking\s+done\s+1\s+\d+s\s+1\.0k\s+\$0\.0500$/m, screen);
      const journal = await records(f.repo, 'live');
      assert.not.ok(
        journal.some((r) => /usage/.test(r.type)),
        'the live usage is not journaled',
      );
    })();
  } finally {
    dir.cleanup();
  }
});

test('live usage: added to the row and the footer while the command runs, replaced by the settled numbers', () => {
  const p = quiet();
  p.tasks(['a']);
  p.track(rec(1, 'attempt-started', { taskId: 'a', attempt: 1, ownerTag: 'o', evidenceDir: '/e', worktree: '/w' }));
  p.live({ taskId: 'a', attempt: 1, tokens: 700, costUsd: 0 });
  assert.is(p.rows()[0]!.tokens, 700);
  assert.match(p.footer(p.rows())[0]!, / · 700 tokens/);
  p.track(
    rec(2, 'command-settled', {
      taskId: 'a',
      attempt: 1,
      reason: 'exited',
      exitCode: 0,
      usage: { inputTokens: 900, outputTokens: 100, cacheReadTokens: 0, cacheCreationTokens: 0 },
      costUsd: 0.02,
    }),
  );
  assert.is(p.rows()[0]!.tokens, 1000);
  assert.is(p.rows()[0]!.costUsd, 0.02);
});

test(
  'in tmux: an agent error holding ESC ]0;pwned BEL is shown as \\x1b]0;pwned\\x07, and the window title stays',
  withPlan(HOSTILE_PLAN, { timeoutMs: 120_000 }, async (f) => {
    const { screen, title } = await inTmux({ columns: 200, rows: 30 }, f);
    assert.ok(screen.includes('\\x1b]0;pwned\\x07'), screen);
    assert.ok(screen.includes(HOSTILE), 'the markup is plain text here');
    assert.is.not(title, 'pwned', 'the agent did not set the terminal title');
  }),
);

// Records as the coordinator journals them (only the fields the fold reads).
function rec(seq: number, type: string, data: Record<string, unknown>): JournalRecord {
  return { seq, prev: '00000000', ts: '2026-11-29T07:55:00.000Z', type, data } as JournalRecord;
}

// A Progress that draws no table, to read its rows (track() writes nothing).
function quiet(): Progress {
  const sink = new SafeOutput(process.stderr);
  return new Progress({ stderr: sink, stdout: sink, json: false, table: false });
}

test('after the gates, a plan without post_run shows the commit step, not post_run', () => {
  for (const postRun of [false, true]) {
    const p = quiet();
    p.tasks(['a'], { postRun });
    p.track(rec(1, 'attempt-started', { taskId: 'a', attempt: 1, ownerTag: 'o', evidenceDir: '/e', worktree: '/w' }));
    p.track(rec(2, 'gates-done', { taskId: 'a', attempt: 1, phase: 'gates', passed: true }));
    assert.is(p.rows()[0]!.state, postRun ? 'post_run' : 'commit');
  }
});

test('fit: never taller than the window, never wider; the tasks at work and failed shown first', () => {
  const rows = [
    ...Array.from({ length: 30 }, (_, i) => ({ task: `done-${i}`, state: 'done', attempt: 1, startedAt: 0, endedAt: 1000 })),
    { task: 'failing', state: 'failed (gate_failed)', attempt: 2, startedAt: 0, endedAt: 1000 },
    { task: 'busy-with-a-very-long-task-name-indeed', state: 'command', attempt: 1, startedAt: 0 },
    ...Array.from({ length: 5 }, (_, i) => ({ task: `later-${i}`, state: 'waiting', attempt: 0 })),
  ];
  const lines = fit(rows, { now: 5000, columns: 40, rows: 10 });
  assert.ok(lines.length <= 9, lines.join('\n'));
  for (const l of lines) assert.ok(l.length <= 39, `${l.length}: ${l}`);
  assert.match(lines.join('\n'), /busy-with/);
  assert.match(lines.join('\n'), /failing/);
  assert.match(lines.at(-1)!, /^\+30 done$/);
  // A task id wider than the window gives way: every row still shows its state.
  const long = 'a-task-id-that-is-sixty-six-characters-long-and-will-not-fit-at-all';
  const narrow = fit([{ task: long, state: 'failed (exited)', attempt: 1, startedAt: 0, endedAt: 1000 }, ...rows.slice(0, 2)], {
    now: 5000,
    columns: 40,
    rows: 10,
  });
  for (const l of narrow) assert.ok(l.length <= 39, `${l.length}: ${l}`);
  assert.match(narrow[1]!, /^a-task-id-t\S*…\s+failed \(exited\)/, narrow.join('\n'));
  assert.match(narrow[2]!, /^done-0\s+done\s+1/, narrow.join('\n'));
  // A terminal that does not know its size (0×0) limits nothing.
  assert.is(fit(rows, { now: 5000, columns: 0, rows: 0 }).length, rows.length + 1);
  // A window that holds them all shows them all, unfolded.
  assert.is(fit(rows.slice(0, 3), { now: 5000, columns: 200, rows: 50 }).length, 4);
});

test('a loop task reads round N/M from its round-done records, until the loop is over', () => {
  for (const preRun of [false, true]) {
    const p = quiet();
    p.tasks(['l', 'plain'], { postRun: false, preRun, rounds: { l: 6 } });
    const state = () => p.rows()[0]!.state;
    p.track(rec(1, 'attempt-started', { taskId: 'l', attempt: 1, ownerTag: 'o', evidenceDir: '/e', worktree: '/w' }));
    assert.is(state(), preRun ? 'running' : 'round 1/6', 'pre_run first, when the plan has one');
    if (preRun) p.track(rec(2, 'pre-run-done', { taskId: 'l', attempt: 1, ok: true }));
    assert.is(state(), 'round 1/6');
    p.track(rec(3, 'command-settled', { taskId: 'l', attempt: 1, reason: 'exited', exitCode: 0 }));
    assert.is(state(), 'round 1/6', 'its verify is part of the round');
    p.track(rec(4, 'round-done', { taskId: 'l', attempt: 1, round: 1, action: 'next_round' }));
    assert.is(state(), 'round 2/6');
    p.track(rec(5, 'command-settled', { taskId: 'l', attempt: 1, reason: 'exited', exitCode: 0 }));
    p.track(rec(6, 'round-done', { taskId: 'l', attempt: 1, round: 2, action: 'done' }));
    assert.is(state(), 'gates', 'verify passed: the gates run next');
    // A task that is no loop never shows rounds.
    p.track(rec(7, 'attempt-started', { taskId: 'plain', attempt: 1, ownerTag: 'o', evidenceDir: '/e', worktree: '/w' }));
    assert.is(p.rows()[1]!.state, 'running');
  }
});

test('a task waiting for the provider after a failed attempt counts as running in the footer, not failed', () => {
  const p = quiet();
  p.tasks(['a'], { postRun: false });
  p.track(rec(1, 'attempt-started', { taskId: 'a', attempt: 1, ownerTag: 'o', evidenceDir: '/e/a.1', worktree: '/w' }));
  p.track(rec(2, 'attempt-closed', { taskId: 'a', attempt: 1, outcome: 'failed', reason: 'provider_limited', class: 'provider' }));
  assert.match(p.footer(p.rows())[0]!, /^0 done · 0 running · 1 failed · 0 queued$/);
  p.track(
    rec(3, 'provider-wait', { taskId: 'a', attempt: 1, reason: 'provider_limited', until: '2026-11-29T08:00:00.000Z', delayMs: 1000 }),
  );
  assert.match(p.rows()[0]!.state, /^waiting for provider until /);
  assert.match(p.footer(p.rows())[0]!, /^0 done · 1 running · 0 failed · 0 queued$/);
  assert.is(p.footer(p.rows())[1], 'first failure: a #1 provider_limited · /e/a.1');
});

test("tasks the run's interruption stopped are counted as interrupted, not failed, and are never the first failure", () => {
  const p = quiet();
  p.tasks(['a', 'b', 'c'], { postRun: false });
  p.track(rec(1, 'attempt-started', { taskId: 'a', attempt: 1, ownerTag: 'o', evidenceDir: '/e/a.1', worktree: '/w' }));
  p.track(rec(2, 'attempt-started', { taskId: 'b', attempt: 1, ownerTag: 'o', evidenceDir: '/e/b.1', worktree: '/w' }));
  p.track(rec(3, 'attempt-closed', { taskId: 'a', attempt: 1, outcome: 'interrupted', reason: 'interrupted', class: 'interrupted' }));
  assert.is(p.rows()[0]!.state, 'interrupted');
  assert.equal(p.footer(p.rows()), ['0 done · 1 running · 0 failed · 1 interrupted · 1 queued']);
  p.track(rec(4, 'attempt-closed', { taskId: 'b', attempt: 1, outcome: 'failed', reason: 'exited', class: 'task' }));
  assert.is(p.rows()[1]!.state, 'failed (exited)');
  assert.equal(p.footer(p.rows()), ['0 done · 0 running · 1 failed · 1 interrupted · 1 queued', 'first failure: b #1 exited · /e/b.1']);
  // An attempt a crashed coordinator left is closed `interrupted` by the take-over, class engine: a failure.
  const q = quiet();
  q.tasks(['c'], { postRun: false });
  q.track(rec(1, 'attempt-started', { taskId: 'c', attempt: 1, ownerTag: 'o', evidenceDir: '/e/c.1', worktree: '/w' }));
  q.track(rec(2, 'attempt-closed', { taskId: 'c', attempt: 1, outcome: 'interrupted', reason: 'coordinator_crashed', class: 'engine' }));
  assert.is(q.rows()[0]!.state, 'interrupted (coordinator_crashed)');
  assert.equal(q.footer(q.rows()), ['0 done · 0 running · 1 failed · 0 queued', 'first failure: c #1 coordinator_crashed · /e/c.1']);
});

test('the footer stays the last lines of a table folded to a small window, and gives way in a tiny one', () => {
  const rows = Array.from({ length: 30 }, (_, i) => ({ task: `t-${i}`, state: i < 3 ? 'command' : 'done', attempt: 1, startedAt: 0 }));
  const foot = footer({ rows, tokens: 1500, costUsd: 0.25, budget: { maxCostUsd: 2 } });
  assert.equal(foot, ['27 done · 3 running · 0 failed · 0 queued · 1.5k tokens · $0.2500 of $2.00 · budget left $1.75']);
  const lines = fit(rows, { now: 1000, columns: 40, rows: 15, footer: [...foot, 'first failure: x #1 exited · /e/x.1'] });
  assert.ok(lines.length <= 14, lines.join('\n'));
  assert.match(lines.at(-2)!, /^27 done · 3 running/);
  assert.is(lines.at(-1), 'first failure: x #1 exited · /e/x.1');
  assert.match(lines.at(-3)!, /^\+20 done$/);
  for (const l of lines) assert.ok(l.length <= 39, l);
  // In a window of 4 lines, the header and a row keep their place; the footer shrinks first.
  assert.is(fit(rows, { now: 1000, columns: 40, rows: 4, footer: foot }).length, 3);
});

test.run();
