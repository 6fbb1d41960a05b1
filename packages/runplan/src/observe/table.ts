import { unreachable } from '@runplan/common';
import type { TaskSpend } from '../events/attempt-log.js';
import type { TaskStep } from '../events/task-step.js';
import { formatCost, formatTokens } from './amounts.js';
import { showControls } from './terminal-text.js';
import { alignColumns } from './columns.js';

// The live table: one row per task, ordered and folded to fit the terminal.

export interface Row {
  task: string;
  /**
   * The STATE cell. Ranking and the footer's counts read only `done`, `adopted`, `waiting` and
   * `failed`: any other word is "at work" — a provider wait (`waiting for provider until
   * 14:05 UTC`, after the failed attempt closed) counts as running, not failed.
   */
  state: string;
  /** Whether the task's last step is its attempt's close without success (default: whether the attempt closed). */
  failed?: boolean;
  /** Whether that close was the run's interruption (Ctrl-C, `runplan stop`): counted apart, not as a failure. */
  interrupted?: boolean;
  attempt: number;
  startedAt?: number;
  endedAt?: number;
  /** What the task's attempts spent in this run; undefined: no record reported any. */
  tokens?: number;
  costUsd?: number;
}

/** What a row needs beyond the task's step. */
export interface RowContext {
  now: () => number;
  /** Whether the plan has a post_run hook: without one, the step after the gates is the commit. */
  postRun: boolean;
  /** Whether the plan has a pre_run hook: a loop's first round starts after it. */
  preRun?: boolean;
  spend?: TaskSpend;
  /** A loop task's `rounds` (the M of `round N/M`). */
  rounds?: number;
}

// A task's row: its step in words, its attempt and when that attempt started and closed.
export function rowOf(task: string, t: TaskStep | undefined, o: RowContext): Row {
  const now = o.now;
  const spend = o.spend?.known === true ? { tokens: o.spend.tokens, costUsd: o.spend.costUsd } : {};
  if (t === undefined) return { task, state: 'waiting', attempt: 0, ...spend };
  const at = (ts: string | undefined): number | undefined => {
    if (ts === undefined) return undefined;
    const ms = Date.parse(ts);
    return Number.isFinite(ms) ? ms : now();
  };
  const state = roundWord(t, o) ?? stepWord(t, o.postRun);
  // A provider wait after the failed close is the task at work (held back), not a failure standing.
  const failed = t.step === 'attempt-closed' && t.closed?.outcome !== 'success' && t.providerWait === undefined;
  // Stopped by the run's interruption (Ctrl-C, `runplan stop`): the class says so. An attempt a
  // crashed coordinator left is closed `interrupted` too, but with class engine: a failure.
  const interrupted = failed && t.closed?.class === 'interrupted';
  return {
    task,
    state,
    failed,
    ...(interrupted ? { interrupted } : {}),
    attempt: t.attempt,
    startedAt: at(t.startedTs),
    endedAt: at(t.closedTs),
    ...spend,
  };
}

// `round N/M` while a loop attempt is in its rounds: from its command's start (after pre_run,
// when the plan has one) until a round-done says the loop is over.
export function roundWord(t: TaskStep, o: { rounds?: number; preRun?: boolean }): string | undefined {
  if (o.rounds === undefined) return undefined;
  const inRounds = t.step === 'command-settled' || t.step === 'pre-run-done' || (t.step === 'attempt-started' && o.preRun !== true);
  if (!inRounds || (t.round !== undefined && t.round.action !== 'next_round')) return undefined;
  return `round ${Math.min(o.rounds, (t.round?.done ?? 0) + 1)}/${o.rounds}`;
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
      if (t.closed?.outcome === 'success') return 'done';
      // `interrupted`, not `interrupted (interrupted)`: the reason says nothing more.
      return t.closed?.reason === t.closed?.outcome
        ? String(t.closed?.outcome)
        : `${String(t.closed?.outcome)} (${String(t.closed?.reason)})`;
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
  if (r.failed ?? r.endedAt !== undefined) return 1;
  return 0;
}

/**
 * The live table as it fits the window: at most `rows - 1` lines, the footer's included (the
 * running and failed tasks first; the rest folded into one "+N done, M waiting" line) and no
 * line wider than `columns - 1` (truncated, so no row ever wraps and a redraw in place stays in place).
 */
export function fit(rows: Row[], o: { now: number; columns: number; rows: number; footer?: string[] }): string[] {
  // A size of 0 is a terminal that does not know its size (a pty nobody sized): no limit then.
  const footer = o.footer ?? [];
  const window = o.rows > 0 ? Math.max(2, o.rows - 1) : Number.POSITIVE_INFINITY;
  // The footer gives way to the table in a window too small for both (a header and one line stay).
  const shownFooter = footer.slice(0, Math.max(0, Math.min(footer.length, window - 3)));
  const height = window - shownFooter.length;
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
  const width = o.columns > 0 ? Math.max(1, o.columns - 1) : Number.POSITIVE_INFINITY;
  const lines = [...table(shown, o.now, width), ...(folded !== '' ? [folded] : []), ...shownFooter].map(showControls);
  return lines.map((line) => (line.length > width ? line.slice(0, Math.max(0, width - 1)) + '…' : line));
}

// The live table: task, state, attempt, elapsed, and what each task spent once any reported it.
// Wider than `width`, the TASK column gives way first (long ids cut with `…`, to 12 at the
// least), so a narrow window still shows each task's state.
export function table(rows: Row[], now: number, width = Number.POSITIVE_INFINITY): string[] {
  const spend = rows.some((r) => r.tokens !== undefined || r.costUsd !== undefined);
  const header = ['TASK', 'STATE', 'ATTEMPT', 'ELAPSED', ...(spend ? ['TOKENS', 'COST'] : [])];
  const body = rows.map((r) => [
    r.task,
    r.state,
    r.attempt === 0 ? '-' : String(r.attempt),
    r.startedAt === undefined ? '-' : `${Math.max(0, Math.round(((r.endedAt ?? now) - r.startedAt) / 1000))}s`,
    ...(spend ? [r.tokens === undefined ? '-' : formatTokens(r.tokens), r.costUsd === undefined ? '-' : formatCost(r.costUsd)] : []),
  ]);
  const lines = alignColumns([header, ...body]);
  const widest = Math.max(...lines.map((l) => showControls(l).length));
  if (widest <= width) return lines;
  const taskWidth = Math.max(...[header, ...body].map((cells) => showControls(cells[0]!).length));
  const room = Math.max(Math.min(taskWidth, 12), taskWidth - (widest - width));
  const cut = (task: string) => (showControls(task).length > room ? `${task.slice(0, room - 1)}…` : task);
  return alignColumns([header, ...body.map(([task, ...rest]) => [cut(task!), ...rest])]);
}
