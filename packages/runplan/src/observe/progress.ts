import type { JournalRecord } from '@runplan/journal';
import { unreachable } from '@runplan/common';
import { legacyTasks, readEvent, taskCountOf } from '../events/read.js';
import { RunView } from '../events/view.js';
import type { TaskStep } from '../events/task-step.js';
import { showControls } from './terminal-text.js';

/**
 * Progress for people (stderr) and for programs (`--json`: every journal record as one
 * JSON line on stdout). Observers never change outcomes: a write to a closed pipe (EPIPE,
 * `runplan run --json | head -1`) is swallowed and that output simply stops.
 */
export class SafeOutput {
  #broken = false;
  constructor(readonly stream: NodeJS.WriteStream | NodeJS.WritableStream) {
    stream.on('error', () => {
      this.#broken = true;
    });
  }
  get broken(): boolean {
    return this.#broken;
  }
  write(text: string): void {
    if (this.#broken) return;
    try {
      this.stream.write(text, () => undefined);
    } catch {
      this.#broken = true;
    }
  }
}

interface Row {
  task: string;
  state: string;
  attempt: number;
  startedAt?: number;
  endedAt?: number;
}

export interface ProgressOptions {
  stderr: SafeOutput;
  stdout: SafeOutput;
  json: boolean;
  /** Draw a live table (stderr is a terminal) instead of one line per event. */
  table: boolean;
  /** The terminal's size, read at every draw: the table never wraps nor grows taller than the window (0: unknown, no limit). */
  size?: () => { columns: number; rows: number };
  now?: () => number;
}

export class Progress {
  /** The records of this run so far (a resumed run's earlier ones are not among them). */
  readonly view = new RunView();
  /** Tasks in the order they are drawn: the plan's first, then any other a record names. */
  readonly #order = new Set<string>();
  #drawn = 0;
  /** Set by close: the final table is drawn once, and nothing after it (the summary follows). */
  #closed = false;
  /** Whether the plan has a post_run hook: without one, the step after the gates is the commit. */
  #postRun = false;
  #timer: NodeJS.Timeout | undefined;
  readonly now: () => number;

  constructor(readonly opts: ProgressOptions) {
    this.now = opts.now ?? Date.now;
    if (opts.table) {
      this.#timer = setInterval(() => this.draw(), 1000);
      this.#timer.unref();
    }
  }

  // The plan's tasks, known before any event (a resumed run has no run-started of its own).
  tasks(ids: readonly string[], hooks?: { postRun: boolean }): void {
    for (const id of ids) this.#order.add(id);
    if (hooks !== undefined) this.#postRun = hooks.postRun;
  }

  // One durable journal record.
  record(r: JournalRecord): void {
    if (this.opts.json) this.opts.stdout.write(JSON.stringify(r) + '\n');
    this.track(r);
    if (this.#closed) return;
    if (this.opts.table) this.draw();
    else this.opts.stderr.write(showControls(describe(r)) + '\n');
  }

  // A message for people that is not an event (refusals, the summary).
  notice(line: string): void {
    this.clear();
    this.opts.stderr.write(showControls(line) + '\n');
  }

  // Draw the final table once (a second close does nothing): what follows is the summary.
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#closed) return;
    if (this.opts.table) this.draw();
    this.#closed = true;
    this.#drawn = 0;
  }

  track(r: JournalRecord): void {
    this.view.add(r);
    const e = readEvent(r);
    // Journals written before run-started carried taskCount listed every task.
    if (e?.type === 'run-started') this.tasks((legacyTasks(e.data) ?? []).map((t) => t.id));
    else if (typeof r.data.taskId === 'string') this.#order.add(r.data.taskId);
  }

  // One row per task, as the view says it stands.
  rows(): Row[] {
    return [...this.#order].map((task) => rowOf(task, this.view.tasks.get(task), { now: this.now, postRun: this.#postRun }));
  }

  clear(): void {
    if (!this.opts.table || this.#drawn === 0) return;
    // Line by line, not one erase-below from the top: tmux (scroll-on-clear) pushes a whole
    // cleared screen into the scrollback, a copy of the table per redraw.
    const n = this.#drawn;
    this.opts.stderr.write(`\x1b[${n}A` + '\x1b[2K\n'.repeat(n) + `\x1b[${n}A`);
    this.#drawn = 0;
  }

  draw(): void {
    if (this.#order.size === 0 || this.#closed) return;
    const size = this.opts.size?.() ?? { columns: 80, rows: 24 };
    const lines = fit(this.rows(), { now: this.now(), ...size });
    // Each line overwritten in place, then what is left of a longer table erased below it.
    const up = this.#drawn > 0 ? `\x1b[${this.#drawn}A` : '';
    this.opts.stderr.write(up + lines.map((l) => `\x1b[2K${l}\n`).join('') + '\x1b[J');
    this.#drawn = lines.length;
  }
}

// A task's row: its step in words, its attempt and when that attempt started and closed.
function rowOf(task: string, t: TaskStep | undefined, o: { now: () => number; postRun: boolean }): Row {
  const now = o.now;
  if (t === undefined) return { task, state: 'waiting', attempt: 0 };
  const at = (ts: string | undefined): number | undefined => {
    if (ts === undefined) return undefined;
    const ms = Date.parse(ts);
    return Number.isFinite(ms) ? ms : now();
  };
  return { task, state: stepWord(t, o.postRun), attempt: t.attempt, startedAt: at(t.startedTs), endedAt: at(t.closedTs) };
}

// The STATE cell of a task's row.
function stepWord(t: TaskStep, postRun: boolean): string {
  switch (t.step) {
    case undefined:
      return 'waiting';
    case 'attempt-started':
      return 'running';
    case 'pre-run-done':
      return 'command';
    case 'command-settled':
      return 'gates';
    case 'gates-done':
      if (t.gatesPhase === 'integrate') return 'integrating';
      return postRun ? 'post_run' : 'commit';
    case 'post-run-done':
      return 'commit';
    case 'integrated':
      return 'checkpoint';
    case 'checkpoint':
      return 'done';
    case 'attempt-closed':
      return t.closed?.outcome === 'success' ? 'done' : `${String(t.closed?.outcome)} (${String(t.closed?.reason)})`;
    case 'checkpoint-adopted':
      return 'adopted';
    default:
      return unreachable(t.step);
  }
}

// How a row ranks when the window cannot hold them all: at work first, then failed, waiting, done.
function rankOf(r: Row): number {
  if (r.state === 'done' || r.state === 'adopted') return 3;
  if (r.state === 'waiting') return 2;
  if (r.endedAt !== undefined) return 1;
  return 0;
}

/**
 * The live table as it fits the window: at most `rows - 1` lines (the running and failed
 * tasks first; the rest folded into one "+N done, M waiting" line) and no line wider than
 * `columns - 1` (truncated, so no row ever wraps and a redraw in place stays in place).
 */
export function fit(rows: Row[], o: { now: number; columns: number; rows: number }): string[] {
  // A size of 0 is a terminal that does not know its size (a pty nobody sized): no limit then.
  const height = o.rows > 0 ? Math.max(2, o.rows - 1) : Number.POSITIVE_INFINITY;
  let shown = rows;
  let folded = '';
  if (rows.length + 1 > height) {
    const ranked = rows.map((r, i) => ({ r, i, k: rankOf(r) })).sort((a, b) => a.k - b.k || a.i - b.i);
    const keep = ranked.slice(0, Math.max(0, height - 2));
    const hidden = ranked.slice(keep.length);
    const done = hidden.filter((x) => x.k === 3).length;
    const waiting = hidden.filter((x) => x.k === 2).length;
    const other = hidden.length - done - waiting;
    folded = [done > 0 ? `+${done} done` : '', waiting > 0 ? `+${waiting} waiting` : '', other > 0 ? `+${other} more` : '']
      .filter((x) => x !== '')
      .join(', ');
    shown = keep.sort((a, b) => a.i - b.i).map((x) => x.r);
  }
  const lines = [...table(shown, o.now), ...(folded !== '' ? [folded] : [])].map(showControls);
  const width = o.columns > 0 ? Math.max(1, o.columns - 1) : Number.POSITIVE_INFINITY;
  return lines.map((line) => (line.length > width ? line.slice(0, Math.max(0, width - 1)) + '…' : line));
}

// The live table: task, state, attempt, elapsed.
export function table(rows: Row[], now: number): string[] {
  const header = ['TASK', 'STATE', 'ATTEMPT', 'ELAPSED'];
  const body = rows.map((r) => [
    r.task,
    r.state,
    r.attempt === 0 ? '-' : String(r.attempt),
    r.startedAt === undefined ? '-' : `${Math.max(0, Math.round(((r.endedAt ?? now) - r.startedAt) / 1000))}s`,
  ]);
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  return all.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
}

// One line for one event (stderr when it is not a terminal).
export function describe(r: JournalRecord): string {
  const d = r.data;
  const time = r.ts.slice(11, 19);
  const task = typeof d.taskId === 'string' ? ` ${d.taskId}` : '';
  const attempt = typeof d.attempt === 'number' ? ` #${d.attempt}` : '';
  return `runplan: ${time} ${r.type}${task}${attempt}${detailOf(r)}`;
}

// What one line says after the event's name (nothing for most events).
function detailOf(r: JournalRecord): string {
  const e = readEvent(r);
  switch (e?.type) {
    case 'run-started':
      return ` ${String(e.data.slug)}: ${taskCountOf(e.data)} task(s), run ${String(e.data.logicalRunId)}`;
    case 'command-settled':
      return `: ${String(e.data.reason)} exit=${String(e.data.exitCode)} ${String(e.data.durationMs)}ms`;
    case 'gates-done':
      return `: ${e.data.passed === false ? 'failed' : 'ok'}`;
    case 'pre-run-done':
    case 'post-run-done':
      return `: ${e.data.ok === false ? 'failed' : 'ok'}`;
    case 'integrated':
      return `: ${String(e.data.mode)} → ${String(e.data.resultCommit).slice(0, 12)}`;
    case 'checkpoint':
      return `: ${String(e.data.resultCommit).slice(0, 12)}`;
    case 'branch-updated':
    case 'landing-started':
    case 'landed':
      return `: ${String(e.data.branch)} → ${String(e.data.to).slice(0, 12)}`;
    case 'attempt-closed':
      return `: ${String(e.data.outcome)}${e.data.outcome === 'success' ? '' : ` (${String(e.data.class)}, ${String(e.data.reason)})`}`;
    case 'run-failed':
      return `: ${String(e.data.class)} (${String(e.data.reason)})`;
    case 'attempt-renumbered': {
      const skipped = Array.isArray(e.data.skipped) ? e.data.skipped : [];
      return `: passed over ${skipped.map((x) => `#${String(x.attempt)} (${String(x.found)} exists)`).join(', ')}`;
    }
    case 'worktrees-removed':
      return `: ${Array.isArray(e.data.worktrees) ? e.data.worktrees.length : 0} earlier worktree(s)`;
    case 'journal-failed':
      return `: the previous coordinator exited 5 (${String(e.data.errno ?? e.data.reason ?? 'journal write failed')} at ${String(e.data.path)})`;
    default:
      return '';
  }
}
