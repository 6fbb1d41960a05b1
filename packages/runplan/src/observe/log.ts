import { shownCost } from '../events/types.js';
import { listSlugs, slugPaths } from '../host/state.js';
import { inspectRuns } from '../resume/inspect.js';
import { alignColumns } from './columns.js';
import { liveCoordinator } from './status.js';

// `runplan log [SLUG]`: every logical run of a slug, oldest first, read from the journals only.

/** One logical run, as `runplan log` lists it. */
export interface LogRow {
  slug: string;
  runId: string;
  /** When run-started was journaled (else the journal's creation). */
  startedAt: string | null;
  /** To its receipt; a live run's to now; an incomplete one's to its last record. */
  durationMs: number;
  /** `running`: no receipt yet and its coordinator alive (the slug lock names it); `incomplete`: no receipt and none. */
  outcome: 'complete' | 'failed' | 'incomplete' | 'running' | 'corrupt';
  /** A failed run's class (`interrupted`, `task`, …). */
  class: string | null;
  tasksDone: number;
  tasksTotal: number;
  attempts: number;
  costUsd: number;
  /** The run this one continues (its checkpoints adopted), or null. */
  continues: string | null;
  journal: string;
}

// Every run of `slug` (or of every slug), oldest first; undefined when the slug has no runs.
export async function collectLog(stateRoot: string, slug?: string): Promise<LogRow[] | undefined> {
  const slugs: LogRow[][] = [];
  for (const name of slug !== undefined ? [slug] : await listSlugs(stateRoot)) {
    const paths = slugPaths(stateRoot, name);
    const runs = await inspectRuns(paths);
    if (runs.length === 0 && slug !== undefined) return undefined;
    // The run a live coordinator holds the slug for, if any: as status, by the lock and the
    // identity naming that live process.
    const live = runs.some((r) => r.kind === 'incomplete') ? (await liveCoordinator(paths))?.['runId'] : undefined;
    const rows: LogRow[] = [];
    slugs.push(rows);
    for (const run of runs) {
      const view = run.journal;
      const running = run.kind === 'incomplete' && run.paths.runId === live;
      const start = view.startedTs ?? view.createdAt ?? null;
      const end = running ? new Date().toISOString() : (view.terminal?.ts ?? view.lastEvent ?? null);
      const ms = start !== null && end !== null ? Date.parse(end) - Date.parse(start) : 0;
      rows.push({
        slug: name,
        runId: run.paths.runId,
        startedAt: start,
        durationMs: Number.isFinite(ms) ? Math.max(0, ms) : 0,
        outcome: running ? 'running' : run.kind,
        class: run.failedClass,
        tasksDone: view.tasksDone(),
        tasksTotal: view.taskCount,
        attempts: view.attemptsTotal,
        costUsd: shownCost(view.costUsd),
        continues: view.started?.continues ?? null,
        journal: run.paths.journal,
      });
    }
  }
  return oldestFirst(slugs);
}

// Each slug's runs (in its own start order) merged into one list by when each run started, so
// the runs of every slug read as they happened; a run with no start time comes first, as it
// does in its slug's order. A slug's own order is kept even if the clock went back between runs.
function oldestFirst(slugs: LogRow[][]): LogRow[] {
  const merged: LogRow[] = [];
  const next = slugs.map(() => 0);
  for (;;) {
    let pick: number | undefined;
    slugs.forEach((rows, i) => {
      const row = rows[next[i]!];
      if (row === undefined) return;
      const best = pick === undefined ? undefined : slugs[pick]![next[pick]!]!;
      if (best === undefined || (row.startedAt ?? '') < (best.startedAt ?? '')) pick = i;
    });
    if (pick === undefined) return merged;
    merged.push(slugs[pick]![next[pick]!]!);
    next[pick]! += 1;
  }
}

// The human table of `runplan log`.
export function logTable(rows: LogRow[]): string[] {
  const header = ['SLUG', 'RUN', 'STARTED', 'DURATION', 'OUTCOME', 'TASKS', 'ATTEMPTS', 'COST', 'JOURNAL'];
  const body = rows.map((r) => [
    r.slug,
    r.runId,
    r.startedAt !== null ? r.startedAt.slice(0, 19).replace('T', ' ') : '-',
    `${(r.durationMs / 1000).toFixed(1)}s`,
    r.class !== null ? `${r.outcome} (${r.class})` : r.outcome,
    `${r.tasksDone}/${r.tasksTotal}`,
    String(r.attempts),
    `$${r.costUsd.toFixed(2)}`,
    r.journal,
  ]);
  return alignColumns([header, ...body]);
}
