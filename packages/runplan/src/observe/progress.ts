import type { JournalRecord } from '@runplan/journal';

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
  now?: () => number;
}

export class Progress {
  readonly rows = new Map<string, Row>();
  #drawn = 0;
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
  tasks(ids: readonly string[]): void {
    for (const id of ids) if (!this.rows.has(id)) this.rows.set(id, { task: id, state: 'waiting', attempt: 0 });
  }

  // One durable journal record.
  record(r: JournalRecord): void {
    if (this.opts.json) this.opts.stdout.write(JSON.stringify(r) + '\n');
    this.track(r);
    if (this.opts.table) this.draw();
    else this.opts.stderr.write(describe(r) + '\n');
  }

  // A message for people that is not an event (refusals, the summary).
  notice(line: string): void {
    this.clear();
    this.opts.stderr.write(line + '\n');
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.opts.table) this.draw();
    this.#drawn = 0;
  }

  track(r: JournalRecord): void {
    const d = r.data as Record<string, unknown>;
    const task = typeof d.taskId === 'string' ? d.taskId : undefined;
    const ts = Date.parse(r.ts);
    const at = Number.isFinite(ts) ? ts : this.now();
    if (r.type === 'run-started' && Array.isArray(d.tasks)) {
      this.tasks((d.tasks as Array<{ id: string }>).map((t) => t.id));
      return;
    }
    if (r.type === 'checkpoint-adopted' && typeof d.taskId === 'string') {
      this.rows.set(d.taskId, { task: d.taskId, state: 'adopted', attempt: 0 });
      return;
    }
    if (task === undefined) return;
    const row = this.rows.get(task) ?? { task, state: 'waiting', attempt: 0 };
    this.rows.set(task, row);
    switch (r.type) {
      case 'attempt-started':
        row.attempt = Number(d.attempt) || row.attempt + 1;
        row.state = 'running';
        row.startedAt = at;
        row.endedAt = undefined;
        break;
      case 'pre-run-done':
        row.state = 'command';
        break;
      case 'command-settled':
        row.state = 'gates';
        break;
      case 'gates-done':
        row.state = d.phase === 'integrate' ? 'integrating' : 'post_run';
        break;
      case 'post-run-done':
        row.state = 'commit';
        break;
      case 'integrated':
        row.state = 'checkpoint';
        break;
      case 'checkpoint':
        row.state = 'done';
        break;
      case 'attempt-closed':
        row.state = d.outcome === 'success' ? 'done' : `${String(d.outcome)} (${String(d.reason)})`;
        row.endedAt = at;
        break;
      default:
        break;
    }
  }

  clear(): void {
    if (!this.opts.table || this.#drawn === 0) return;
    this.opts.stderr.write(`\x1b[${this.#drawn}A\x1b[J`);
    this.#drawn = 0;
  }

  draw(): void {
    if (this.rows.size === 0) return;
    const lines = table([...this.rows.values()], this.now());
    const up = this.#drawn > 0 ? `\x1b[${this.#drawn}A\x1b[J` : '';
    this.opts.stderr.write(up + lines.join('\n') + '\n');
    this.#drawn = lines.length;
  }
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
  const d = r.data as Record<string, unknown>;
  const time = r.ts.slice(11, 19);
  const task = typeof d.taskId === 'string' ? ` ${d.taskId}` : '';
  const attempt = typeof d.attempt === 'number' ? ` #${d.attempt}` : '';
  let detail = '';
  switch (r.type) {
    case 'run-started':
      detail = ` ${String(d.slug)}: ${taskCountOf(d)} task(s), run ${String(d.logicalRunId)}`;
      break;
    case 'command-settled':
      detail = `: ${String(d.reason)} exit=${String(d.exitCode)} ${String(d.durationMs)}ms`;
      break;
    case 'gates-done':
    case 'pre-run-done':
    case 'post-run-done':
      detail = `: ${d.passed === false || d.ok === false ? 'failed' : 'ok'}`;
      break;
    case 'integrated':
      detail = `: ${String(d.mode)} → ${String(d.resultCommit).slice(0, 12)}`;
      break;
    case 'checkpoint':
      detail = `: ${String(d.resultCommit).slice(0, 12)}`;
      break;
    case 'branch-updated':
    case 'landing-started':
    case 'landed':
      detail = `: ${String(d.branch)} → ${String(d.to).slice(0, 12)}`;
      break;
    case 'attempt-closed':
      detail = `: ${String(d.outcome)}${d.outcome === 'success' ? '' : ` (${String(d.class)}, ${String(d.reason)})`}`;
      break;
    case 'run-failed':
      detail = `: ${String(d.class)} (${String(d.reason)})`;
      break;
    case 'attempt-renumbered': {
      const skipped = Array.isArray(d.skipped) ? (d.skipped as Array<{ attempt?: unknown; found?: unknown }>) : [];
      detail = `: passed over ${skipped.map((x) => `#${String(x.attempt)} (${String(x.found)} exists)`).join(', ')}`;
      break;
    }
    case 'worktrees-removed':
      detail = `: ${Array.isArray(d.worktrees) ? d.worktrees.length : 0} earlier worktree(s)`;
      break;
    case 'journal-failed':
      detail = `: the previous coordinator exited 5 (${String(d.errno ?? d.reason ?? 'journal write failed')} at ${String(d.path)})`;
      break;
    default:
      break;
  }
  return `runplan: ${time} ${r.type}${task}${attempt}${detail}`;
}

// run-started journals `taskCount` (the list itself is in plan.json); journals written
// before that carried `tasks`.
function taskCountOf(d: Record<string, unknown>): number {
  if (typeof d.taskCount === 'number') return d.taskCount;
  return Array.isArray(d.tasks) ? d.tasks.length : 0;
}
