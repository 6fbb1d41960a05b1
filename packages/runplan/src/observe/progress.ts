import type { JournalRecord } from '@runplan/journal';
import { legacyTasks, readEvent } from '../events/read.js';
import { RunView } from '../events/view.js';
import { totalTokens } from '../agent/state.js';
import type { TaskSpend } from '../events/attempt-log.js';
import type { LiveUsage } from '../events/usage.js';
import { showControls } from './terminal-text.js';
import { describe } from './describe.js';
import { type FirstFailure, footer } from './footer.js';
import { fit, rowOf, type Row } from './table.js';

export { describe } from './describe.js';
export { fit, table } from './table.js';
export { footer } from './footer.js';

/** What the plan says that the table shows (known when the coordinator starts: RunRequest.onStart). */
export interface PlanFacts {
  /** Whether the plan has a post_run hook: without one, the step after the gates is the commit. */
  postRun: boolean;
  /** Whether it has a pre_run hook: a loop's first round starts after it. */
  preRun?: boolean;
  budget?: { maxTokens?: number; maxCostUsd?: number };
  /** Each loop task's `rounds` (the M of `round N/M`). */
  rounds?: Record<string, number>;
}

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
  /** The records of this run so far (a resumed run's earlier ones first: see earlier, follow). */
  #view = new RunView();
  /** Whether #view is the coordinator's (StartInfo.view): it folds every record before we see it. */
  #follows = false;
  /** Tasks in the order they are drawn: the plan's first, then any other a record names. */
  readonly #order = new Set<string>();
  #drawn = 0;
  /** Set by close: the final table is drawn once, and nothing after it (the summary follows). */
  #closed = false;
  #plan: PlanFacts = { postRun: false };
  /** The footer names it: the first attempt of this run that closed without success. */
  #firstFailure: FirstFailure | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Running commands' spend so far (RunRequest.onLiveUsage), by task, until their command-settled. */
  readonly #live = new Map<string, LiveUsage>();
  readonly now: () => number;

  constructor(readonly opts: ProgressOptions) {
    this.now = opts.now ?? Date.now;
    if (opts.table) {
      this.#timer = setInterval(() => this.draw(), 1000);
      this.#timer.unref();
    }
  }

  // The plan's tasks, known before any event (a resumed run has no run-started of its own).
  tasks(ids: readonly string[], plan?: PlanFacts): void {
    for (const id of ids) this.#order.add(id);
    if (plan !== undefined) this.#plan = plan;
  }

  // The records a resumed run's journal held before this coordinator: folded, not printed
  // (only while nothing of this coordinator's own has been, so the view stays in journal order).
  earlier(records: readonly JournalRecord[]): void {
    if (this.view.lastSeen !== undefined || this.#follows) return;
    for (const r of records) this.track(r);
  }

  // The coordinator's own fold of the run (StartInfo.view), the earlier records of a resume
  // included: shown instead of folding every record again (only before any is tracked).
  follow(view: RunView): void {
    if (this.#view.lastSeen !== undefined || this.#follows) return;
    this.#view = view;
    this.#follows = true;
  }

  get view(): RunView {
    return this.#view;
  }

  // A running command's spend so far: shown in its row (drawn with the next redraw), never journaled.
  live(u: LiveUsage): void {
    this.#live.set(u.taskId, u);
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
    if (!this.#follows) this.#view.add(r);
    const e = readEvent(r);
    // Journals written before run-started carried taskCount listed every task.
    if (e?.type === 'run-started') this.tasks((legacyTasks(e.data) ?? []).map((t) => t.id));
    else if (typeof r.data.taskId === 'string') this.#order.add(r.data.taskId);
    // The settled numbers replace what the running command said of itself.
    if ((e?.type === 'command-settled' || e?.type === 'attempt-closed') && this.#live.get(e.data.taskId)?.attempt === e.data.attempt)
      this.#live.delete(e.data.taskId);
    if (
      e?.type === 'attempt-closed' &&
      e.data.outcome !== 'success' &&
      e.data.class !== 'interrupted' &&
      this.#firstFailure === undefined
    ) {
      const entry = this.view.log.entries.get(`${e.data.taskId}.${e.data.attempt}`);
      this.#firstFailure = {
        task: e.data.taskId,
        attempt: e.data.attempt,
        reason: e.data.reason,
        evidenceDir: entry?.evidenceDir ?? '',
      };
    }
  }

  // One row per task, as the view says it stands.
  rows(): Row[] {
    const { postRun, preRun, rounds } = this.#plan;
    return [...this.#order].map((task) => {
      const spend = withLive(this.view.log.spent.get(task), this.#live.get(task));
      const loop = rounds?.[task];
      return rowOf(task, this.view.tasks.get(task), {
        now: this.now,
        postRun,
        ...(preRun !== undefined ? { preRun } : {}),
        ...(spend !== undefined ? { spend } : {}),
        ...(loop !== undefined ? { rounds: loop } : {}),
      });
    });
  }

  // The footer under the table: totals, spend against the budget, the first failure.
  footer(rows: Row[]): string[] {
    return footer({
      rows,
      tokens: totalTokens(this.view.usage) + sum([...this.#live.values()].map((u) => u.tokens)),
      costUsd: this.view.costUsd + sum([...this.#live.values()].map((u) => u.costUsd)),
      ...(this.#plan.budget !== undefined ? { budget: this.#plan.budget } : {}),
      ...(this.#firstFailure !== undefined ? { failure: this.#firstFailure } : {}),
    });
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
    const rows = this.rows();
    const lines = fit(rows, { now: this.now(), ...size, footer: this.footer(rows) });
    // Each line overwritten in place, then what is left of a longer table erased below it.
    const up = this.#drawn > 0 ? `\x1b[${this.#drawn}A` : '';
    this.opts.stderr.write(up + lines.map((l) => `\x1b[2K${l}\n`).join('') + '\x1b[J');
    this.#drawn = lines.length;
  }
}

// A task's spend with its running command's so far added (the journal's attempts plus the live one).
function withLive(spend: TaskSpend | undefined, live: LiveUsage | undefined): TaskSpend | undefined {
  if (live === undefined) return spend;
  const base = spend ?? { tokens: 0, costUsd: 0, known: false };
  return { tokens: base.tokens + live.tokens, costUsd: base.costUsd + live.costUsd, known: true };
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
