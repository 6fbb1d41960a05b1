import { isAbsolute, relative } from 'node:path';
import { isAlive } from '@runplan/settle';
import { holdingDirectory } from '@runplan/workdir';
import { isLockHeld, readJournal, readLockHolder, type JournalRecord, type LockHolder } from '@runplan/journal';
import { addUsage, shownCost, ZERO_USAGE, type UsageTotals } from '../events/types.js';
import { diskUsage, listRunIds, listSlugs, runPaths, slugPaths, type SlugPaths } from '../host/state.js';
import { findLeftovers, openAttemptTags } from '../resume/leftovers.js';

/**
 * One row of `runplan status`: the slug's newest logical run, read from its journal only.
 * Never takes a lock and never writes. `running` needs both the kernel lock answering AND
 * the identity's start time matching a live process; an incomplete run whose coordinator
 * is gone is `degraded` and carries the exact command that resumes it, and the processes
 * its crashed coordinator left running; `stopping` is that run while `runplan stop` holds
 * the slug lock to end them and close it.
 *
 *   running ── coordinator killed ──▶ degraded ── runplan stop ──▶ stopping ──▶ failed (interrupted)
 *      │                                 └── runplan run (resume) ──▶ running
 *      └── receipt ──▶ complete | failed
 */
export type SlugState = 'running' | 'stopping' | 'degraded' | 'complete' | 'failed' | 'corrupt' | 'empty';

export interface SlugStatus {
  slug: string;
  runId: string | null;
  runs: number;
  state: SlugState;
  /** Failure class when `failed` (e.g. `interrupted`). */
  failedClass: string | null;
  tasksDone: number;
  tasksTotal: number;
  current: string[];
  attempts: number;
  usage: UsageTotals;
  costUsd: number;
  elapsedMs: number;
  diskBytes: number;
  journal: string | null;
  planFile: string | null;
  /** The live holder of the slug lock: the coordinator, or a `runplan stop` (its `role` is `stop`). */
  coordinator: LockHolder | null;
  /**
   * Pids of the run's processes still alive while no coordinator of it is (degraded,
   * corrupt, stopping): what the crashed coordinator left running, found by the run's
   * ownerTag prefix and its journaled open attempts' tags. Empty otherwise.
   */
  leftovers: number[];
  /** ISO time of the journal's last valid record: when the run was last heard from. */
  lastSeen: string | null;
  resumeCommand: string | null;
  corruption: string | null;
}

export interface StatusOptions {
  /** Flags to repeat in the resume command (`--state-dir`, `--repo`). */
  resumeFlags?: string[];
  now?: number;
}

// The status of every slug under a state root (or just `slug`; undefined when it has no state).
export async function collectStatus(stateRoot: string, slug?: string, opts: StatusOptions = {}): Promise<SlugStatus[] | undefined> {
  const slugs = slug !== undefined ? [slug] : await listSlugs(stateRoot);
  const rows: SlugStatus[] = [];
  for (const name of slugs) {
    const paths = slugPaths(stateRoot, name);
    const runs = await listRunIds(paths);
    if (runs.length === 0) {
      if (slug !== undefined) return undefined;
      continue;
    }
    rows.push(await slugStatus(paths, runs, opts));
  }
  return rows;
}

/** The `role` a `runplan stop` writes into the slug lock's identity file (a coordinator writes none). */
export const STOP_ROLE = 'stop';

// Whether a lock holder is a `runplan stop` ending a crashed run's leftovers, not a coordinator.
export function isStopHolder(holder: LockHolder | undefined): boolean {
  return holder !== undefined && holder.role === STOP_ROLE;
}

// Whether the process named in a slug's identity file holds the lock and is that process:
// the live coordinator, or a `runplan stop` holding the slug (isStopHolder tells them apart).
export async function liveCoordinator(slug: SlugPaths): Promise<LockHolder | undefined> {
  if (!(await isLockHeld(slug.dir))) return undefined;
  const holder = readLockHolder(slug.identity);
  if (holder === undefined) return undefined;
  return isAlive({ pid: holder.pid, startTime: holder.startTime, bootId: holder.bootId, host: holder.host }) ? holder : undefined;
}

async function slugStatus(slug: SlugPaths, runIds: string[], opts: StatusOptions): Promise<SlugStatus> {
  const runId = runIds[runIds.length - 1]!;
  const run = runPaths(slug, runId);
  const row: SlugStatus = {
    slug: slug.slug,
    runId,
    runs: runIds.length,
    state: 'empty',
    failedClass: null,
    tasksDone: 0,
    tasksTotal: 0,
    current: [],
    attempts: 0,
    usage: ZERO_USAGE,
    costUsd: 0,
    elapsedMs: 0,
    diskBytes: await diskUsage(slug.dir),
    journal: run.journal,
    planFile: null,
    coordinator: null,
    leftovers: [],
    lastSeen: null,
    resumeCommand: null,
    corruption: null,
  };
  let records: JournalRecord[] = [];
  try {
    const read = await readJournal(run.journal);
    records = read.records;
    if (read.status.kind === 'corrupt') {
      row.state = 'corrupt';
      row.corruption = `offset ${read.status.offset}, seq ${read.status.seq ?? '?'}: ${read.status.reason}`;
    }
  } catch (e) {
    row.state = 'corrupt';
    row.corruption = e instanceof Error ? e.message : String(e);
  }
  const live = await liveCoordinator(slug);
  if (live !== undefined) row.coordinator = live;
  const driven = live !== undefined && !isStopHolder(live);
  // A run nobody drives is seen only up to its last record: its elapsed time stops there.
  summarize(row, records, driven ? (opts.now ?? Date.now()) : undefined);
  row.diskBytes += await workdirUsage(slug, records);
  const terminal = records.find((r) => r.terminal === true);
  if (terminal === undefined && !driven) row.leftovers = findLeftovers(runId, openAttemptTags(records));
  if (row.state === 'corrupt') return row;
  if (terminal !== undefined) {
    row.state = terminal.type === 'run-complete' ? 'complete' : 'failed';
    const cls = (terminal.data as { class?: unknown }).class;
    row.failedClass = row.state === 'failed' && typeof cls === 'string' ? cls : null;
  } else if (driven) {
    row.state = 'running';
  } else if (live !== undefined) {
    row.state = 'stopping';
  } else {
    row.state = 'degraded';
    const plan = row.planFile ?? '<plan>';
    row.resumeCommand = ['runplan', 'run', quoteArg(plan), ...(opts.resumeFlags ?? []).map(quoteArg)].join(' ');
  }
  return row;
}

// Disk used by attempt dirs outside the slug dir (a plan `workdir`): its holding directory.
async function workdirUsage(slug: SlugPaths, records: JournalRecord[]): Promise<number> {
  const started = records.find((r) => r.type === 'run-started')?.data as { workdir?: unknown } | undefined;
  if (typeof started?.workdir !== 'string') return 0;
  const holding = holdingDirectory(started.workdir, { 'plan.slug': slug.slug, 'harness.name': slug.slug });
  if (!holding.ok) return 0;
  const rel = relative(slug.dir, holding.value);
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) return 0;
  return diskUsage(holding.value);
}

// Folds the journal into the row: tasks done/total, current tasks, attempts, usage, last
// seen, elapsed (to the receipt; else to `now`, or to the last record when `now` is undefined).
function summarize(row: SlugStatus, records: JournalRecord[], now: number | undefined): void {
  const open = new Set<string>();
  let start: number | undefined;
  let end: number | undefined;
  for (const r of records) {
    const d = r.data as Record<string, unknown>;
    switch (r.type) {
      case 'run-started':
        // taskCount; journals written before it listed every task in `tasks`.
        row.tasksTotal = typeof d.taskCount === 'number' ? d.taskCount : Array.isArray(d.tasks) ? d.tasks.length : 0;
        row.planFile = typeof d.planFile === 'string' ? d.planFile : null;
        start = Date.parse(r.ts);
        break;
      case 'attempt-started':
        row.attempts++;
        open.add(String(d.taskId));
        break;
      case 'attempt-closed':
        open.delete(String(d.taskId));
        break;
      case 'checkpoint':
        row.tasksDone++;
        break;
      case 'command-settled':
      case 'usage':
        if (d.usage !== null && typeof d.usage === 'object')
          row.usage = addUsage(row.usage, { ...ZERO_USAGE, ...(d.usage as UsageTotals) });
        if (typeof d.costUsd === 'number') row.costUsd += d.costUsd;
        break;
      default:
        break;
    }
    if (r.terminal === true) end = Date.parse(r.ts);
    row.lastSeen = r.ts;
  }
  row.current = [...open];
  row.costUsd = shownCost(row.costUsd);
  end ??= now ?? (row.lastSeen !== null ? Date.parse(row.lastSeen) : undefined);
  if (start !== undefined && Number.isFinite(start) && end !== undefined && Number.isFinite(end)) row.elapsedMs = Math.max(0, end - start);
}

// Quotes an argument for a shell command line people copy (only when it needs it).
function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

// The human rows of `runplan status` (a table with a header).
export function statusTable(rows: SlugStatus[]): string[] {
  const header = ['SLUG', 'RUN', 'RUNS', 'STATE', 'TASKS', 'ATTEMPTS', 'CURRENT', 'ELAPSED', 'TOKENS', 'COST', 'DISK'];
  const body = rows.map((r) => [
    r.slug,
    r.runId ?? '-',
    `×${r.runs}`,
    stateCell(r),
    `${r.tasksDone}/${r.tasksTotal}`,
    String(r.attempts),
    r.current.length > 0 ? r.current.join(',') : '-',
    `${Math.round(r.elapsedMs / 1000)}s`,
    String(r.usage.inputTokens + r.usage.outputTokens + r.usage.cacheReadTokens + r.usage.cacheCreationTokens),
    `$${r.costUsd.toFixed(2)}`,
    humanBytes(r.diskBytes),
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

// The STATE cell: `failed (class)`, or a state with the count of leftovers still alive.
function stateCell(r: SlugStatus): string {
  if (r.state === 'failed') return `failed (${r.failedClass ?? '?'})`;
  if (r.leftovers.length > 0) return `${r.state} (${r.leftovers.length} leftover${r.leftovers.length === 1 ? '' : 's'})`;
  return r.state;
}

function humanBytes(n: number): string {
  if (n < 1024) return `${n}B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)}K`;
  if (n < 1 << 30) return `${(n / (1 << 20)).toFixed(1)}M`;
  return `${(n / (1 << 30)).toFixed(1)}G`;
}
