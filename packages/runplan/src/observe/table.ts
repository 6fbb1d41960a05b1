import { unreachable } from '@runplan/common';
import type { TaskStep } from '../events/task-step.js';
import { showControls } from './terminal-text.js';

// The live table: one row per task, ordered and folded to fit the terminal.

export interface Row {
  task: string;
  state: string;
  attempt: number;
  startedAt?: number;
  endedAt?: number;
}

// A task's row: its step in words, its attempt and when that attempt started and closed.
export function rowOf(task: string, t: TaskStep | undefined, o: { now: () => number; postRun: boolean }): Row {
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
export function stepWord(t: TaskStep, postRun: boolean): string {
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
      if (t.providerWait !== undefined) return `waiting for provider until ${clockOf(t.providerWait.until)}`;
      return t.closed?.outcome === 'success' ? 'done' : `${String(t.closed?.outcome)} (${String(t.closed?.reason)})`;
    case 'checkpoint-adopted':
      return 'adopted';
    default:
      return unreachable(t.step);
  }
}

// An ISO time as the clock shows it in UTC (`19:00:00 UTC`), with the date when it is not today's.
export function clockOf(iso: string, now: number = Date.now()): string {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const at = new Date(ms).toISOString();
  const day = at.slice(0, 10) === new Date(now).toISOString().slice(0, 10) ? '' : `${at.slice(0, 10)} `;
  return `${day}${at.slice(11, 19)} UTC`;
}

// How a row ranks when the window cannot hold them all: at work first, then failed, waiting, done.
export function rankOf(r: Row): number {
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
