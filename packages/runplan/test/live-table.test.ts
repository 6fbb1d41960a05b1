import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir } from '@runplan/test-fixtures';
import type { JournalRecord } from '@runplan/journal';
import { fit, Progress, SafeOutput } from '../src/observe/progress.js';
import { HOSTILE, HOSTILE_PLAN } from './hostile.js';
import { RUNPLAN, waitUntil, withPlan } from './support.js';

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
}

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
  // A terminal that does not know its size (0×0) limits nothing.
  assert.is(fit(rows, { now: 5000, columns: 0, rows: 0 }).length, rows.length + 1);
  // A window that holds them all shows them all, unfolded.
  assert.is(fit(rows.slice(0, 3), { now: 5000, columns: 200, rows: 50 }).length, 4);
});

test.run();
