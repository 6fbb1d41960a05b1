import { isAbsolute, relative } from 'node:path';
import { isAlive } from '@runplan/settle';
import { holdingDirectory } from '@runplan/workdir';
import { isLockHeld, readJournal, readLockHolder, type JournalRecord, type LockHolder } from '@runplan/journal';
import { addUsage, shownCost, ZERO_USAGE, type UsageTotals } from './events.js';
import { diskUsage, listRunIds, listSlugs, runPaths, slugPaths, type SlugPaths } from './state.js';

/**
 * One row of `runplan status`: the slug's newest logical run, read from its journal only.
 * Never takes a lock and never writes. `running` needs both the kernel lock answering AND
 * the identity's start time matching a live process; an incomplete run whose coordinator
 * is gone is `degraded` and carries the exact command that resumes it.
 */
export type SlugState = 'running' | 'degraded' | 'complete' | 'failed' | 'corrupt' | 'empty';

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
  coordinator: LockHolder | null;
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

// Whether the coordinator named in a slug's identity file holds the lock and is that process.
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
  summarize(row, records, opts.now ?? Date.now());
  row.diskBytes += await workdirUsage(slug, records);
  const live = await liveCoordinator(slug);
  if (live !== undefined) row.coordinator = live;
  if (row.state === 'corrupt') return row;
  const terminal = records.find((r) => r.terminal === true);
  if (terminal !== undefined) {
    row.state = terminal.type === 'run-complete' ? 'complete' : 'failed';
    const cls = (terminal.data as { class?: unknown }).class;
    row.failedClass = row.state === 'failed' && typeof cls === 'string' ? cls : null;
  } else if (live !== undefined) {
    row.state = 'running';
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

// Folds the journal into the row: tasks done/total, current tasks, attempts, usage, elapsed.
function summarize(row: SlugStatus, records: JournalRecord[], now: number): void {
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
        if (d.usage !== null && typeof d.usage === 'object') row.usage = addUsage(row.usage, { ...ZERO_USAGE, ...(d.usage as UsageTotals) });
        if (typeof d.costUsd === 'number') row.costUsd += d.costUsd;
        break;
      default:
        break;
    }
    if (r.terminal === true) end = Date.parse(r.ts);
  }
  row.current = [...open];
  row.costUsd = shownCost(row.costUsd);
  if (start !== undefined && Number.isFinite(start)) row.elapsedMs = Math.max(0, (end ?? now) - start);
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
    r.state === 'failed' ? `failed (${r.failedClass ?? '?'})` : r.state,
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
  return all.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
}

function humanBytes(n: number): string {
  if (n < 1024) return `${n}B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)}K`;
  if (n < 1 << 30) return `${(n / (1 << 20)).toFixed(1)}M`;
  return `${(n / (1 << 30)).toFixed(1)}G`;
}
