import { isAbsolute, relative } from 'node:path';
import { isAlive } from '@runplan/settle';
import { holdingDirectory } from '@runplan/workdir';
import { isLockHeld, readLockHolder, type LockHolder } from '@runplan/journal';
import { shownCost, ZERO_USAGE, type RunStartedData, type UsageTotals } from '../events/types.js';
import type { RunView } from '../events/view.js';
import { countDiskUsage } from '../host/disk-count.js';
import { compareRunStarts, listSlugs, runDirNames, runPaths, slugPaths, type SlugPaths } from '../host/state.js';
import { findLeftovers, journaledCgroupParents } from '../resume/leftovers.js';
import { mayHaveJobs, queuedRunJobs } from '../resume/slurm-jobs.js';
import { readRun, type RunRead } from '../resume/inspect.js';
import { slugBudget, spendReads, type SlugBudget } from './slug-budget.js';

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
  /** Tasks a running run holds back for the provider (provider-wait): until when, and why. */
  providerWaits: Array<{ taskId: string; attempt: number; until: string; reason: string }>;
  attempts: number;
  usage: UsageTotals;
  costUsd: number;
  /** The slug's spend across all its runs against the newest run's `[budget]`: what the budget check sees. */
  slugSpend: SlugBudget;
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
  /** Slurm job ids of a run nobody drives still in the queue (present only for a run that used Slurm). */
  jobs?: string[];
  /** ISO time of the journal's last valid record: when the run was last heard from. */
  lastSeen: string | null;
  resumeCommand: string | null;
  corruption: string | null;
}

export interface StatusOptions {
  /** Flags to repeat in the resume command (`--state-dir`, `--repo`). */
  resumeFlags?: string[];
  now?: number;
  /** Who drives the slug now (liveCoordinator; a test stands in for a coordinator that exits right after the check). */
  liveness?: (slug: SlugPaths) => Promise<LockHolder | undefined>;
}

// The status of every slug under a state root (or just `slug`; undefined when it has no state).
export async function collectStatus(stateRoot: string, slug?: string, opts: StatusOptions = {}): Promise<SlugStatus[] | undefined> {
  const slugs = slug !== undefined ? [slug] : await listSlugs(stateRoot);
  const rows: SlugStatus[] = [];
  for (const name of slugs) {
    const paths = slugPaths(stateRoot, name);
    const runs = await runDirNames(paths);
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

// One slug's row. `dirs`: its run dirs, unordered. Every journal is read once for its start
// order and spend (spendReads) while find(1) counts the disk beside it, then the newest in full.
async function slugStatus(slug: SlugPaths, dirs: string[], opts: StatusOptions): Promise<SlugStatus> {
  const disk = countDiskUsage(slug.dir);
  const reads = spendReads(slug, dirs);
  const runs = (await reads).sort((a, b) => compareRunStarts(a.start, b.start));
  const runId = runs.at(-1)!.start.runId;
  const run = runPaths(slug, runId);
  const reading = readDriven(slug, run.journal, opts.liveness ?? liveCoordinator);
  const spend = reading.then(({ read: r }) =>
    slugBudget(
      runs.slice(0, -1).map((x) => x.view),
      r.view,
    ),
  );
  const row: SlugStatus = {
    slug: slug.slug,
    runId,
    runs: runs.length,
    state: 'empty',
    failedClass: null,
    tasksDone: 0,
    tasksTotal: 0,
    current: [],
    providerWaits: [],
    attempts: 0,
    usage: ZERO_USAGE,
    costUsd: 0,
    slugSpend: { usage: ZERO_USAGE, tokens: 0, costUsd: 0, maxTokens: null, maxCostUsd: null },
    elapsedMs: 0,
    diskBytes: 0,
    journal: run.journal,
    planFile: null,
    coordinator: null,
    leftovers: [],
    lastSeen: null,
    resumeCommand: null,
    corruption: null,
  };
  const { read, live } = await reading;
  const view = read.view;
  if (read.status.kind === 'corrupt') {
    row.state = 'corrupt';
    row.corruption = read.error ?? `offset ${read.status.offset}, seq ${read.status.seq ?? '?'}: ${read.status.reason}`;
  }
  if (live !== undefined) row.coordinator = live;
  const driven = live !== undefined && !isStopHolder(live);
  // A run nobody drives is seen only up to its last record: its elapsed time stops there.
  summarize(row, view, driven ? (opts.now ?? Date.now()) : undefined);
  row.diskBytes = (await disk) + (await workdirUsage(slug, view.started));
  row.slugSpend = await spend;
  const terminal = view.terminal;
  if (terminal === undefined && !driven)
    row.leftovers = findLeftovers(
      runId,
      [...view.open.values()].map((a) => a.ownerTag),
      { cgroupParents: journaledCgroupParents(view.open.values()) },
    );
  if (terminal === undefined && !driven && mayHaveJobs([...view.open.values()])) row.jobs = await queuedRunJobs(runId);
  // Only a driven, unfinished run is waiting for anything.
  if (!driven || terminal !== undefined) row.providerWaits = [];
  // A corrupt journal's valid prefix is no account of what runs now: no current task.
  if (row.state === 'corrupt') return { ...row, current: [], providerWaits: [] };
  if (terminal !== undefined) {
    row.state = terminal.type === 'run-complete' ? 'complete' : 'failed';
    const cls = view.failedReceipt?.class;
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

// The newest run's journal and who drives it, agreeing. Who drives it is asked BEFORE the
// read: a coordinator that writes its receipt and exits in between is read complete (asked
// only after, it was read unfinished, then found gone: degraded, with a resume command). For a
// run still unfinished it is asked again after the read; when the answers differ — it crashed,
// or a resume took the slug, in between — the journal is read once more under the second
// answer (a coordinator writes its receipt before it lets go of the lock).
async function readDriven(
  slug: SlugPaths,
  journal: string,
  liveness: (slug: SlugPaths) => Promise<LockHolder | undefined>,
): Promise<{ read: RunRead; live: LockHolder | undefined }> {
  const before = await liveness(slug);
  const read = await readRun(journal);
  if (read.view.terminal !== undefined || read.status.kind === 'corrupt') return { read, live: before };
  const after = await liveness(slug);
  if (sameHolder(before, after)) return { read, live: after };
  return { read: await readRun(journal), live: after };
}

// Whether two liveness answers name the same coordinator (or both none).
function sameHolder(a: LockHolder | undefined, b: LockHolder | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.pid === b.pid && a.startTime === b.startTime && a.bootId === b.bootId && a.host === b.host;
}

// Disk used by attempt dirs outside the slug dir (a plan `workdir`): its holding directory.
async function workdirUsage(slug: SlugPaths, started: RunStartedData | undefined): Promise<number> {
  if (typeof started?.workdir !== 'string') return 0;
  const holding = holdingDirectory(started.workdir, { 'plan.slug': slug.slug, 'harness.name': slug.slug });
  if (!holding.ok) return 0;
  const rel = relative(slug.dir, holding.value);
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) return 0;
  return countDiskUsage(holding.value);
}

// The journal's view into the row: tasks done (adopted ones too) and total, current tasks,
// attempts, usage and cost (with what a continuation carried: the receipt's figures), last
// seen, elapsed (to the receipt; else to `now`, or to the last record when `now` is undefined).
function summarize(row: SlugStatus, view: RunView, now: number | undefined): void {
  row.tasksTotal = view.taskCount;
  row.planFile = typeof view.started?.planFile === 'string' ? view.started.planFile : null;
  row.attempts = view.attemptsTotal;
  row.current = view.current();
  row.providerWaits = [...view.providerWaits.values()].map((w) => ({
    taskId: w.taskId,
    attempt: w.attempt,
    until: w.until,
    reason: w.reason,
  }));
  row.tasksDone = view.tasksDone();
  row.usage = view.usage;
  row.costUsd = shownCost(view.costUsd);
  row.lastSeen = view.lastSeen ?? null;
  const start = view.startedTs !== undefined ? Date.parse(view.startedTs) : undefined;
  const end =
    view.terminal !== undefined ? Date.parse(view.terminal.ts) : (now ?? (row.lastSeen !== null ? Date.parse(row.lastSeen) : undefined));
  if (start !== undefined && Number.isFinite(start) && end !== undefined && Number.isFinite(end)) row.elapsedMs = Math.max(0, end - start);
}

// Quotes an argument for a shell command line people copy (only when it needs it).
function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
