import { HEADER_TYPE, scanJournal, type JournalRecord, type JournalStatus, type ScanResult } from '@runplan/journal';
import type { ProcessIdentity } from '@runplan/settle';
import type { Plan } from '../plan/types.js';
import { taskContractDigests } from '../plan/digest.js';
import { checkpointId } from '../attempt/integrate.js';
import { emptyHistory, recordFailure, type TaskHistory } from '../repair/index.js';
import {
  addUsage,
  ZERO_USAGE,
  type AttemptFailureData,
  type CheckpointData,
  type RunStartedData,
  type UsageTotals,
} from '../events/types.js';
import { ancestryOracle, isAncestor, missingObjects, type AncestryOracle } from '../host/git.js';
import { compareRunStarts, headerStartOrder, runDirNames, runPaths, type RunPaths, type RunStart, type SlugPaths } from '../host/state.js';

/**
 * Reading a slug's earlier runs back from their journals and git, read-only: which runs
 * exist and how they ended, and — for a resume or a continuation — which checkpoints are
 * still valid. A resume refuses on any doubt (the caller exits 3 having written nothing);
 * a continuation adopts the longest valid prefix of the checkpoint chain.
 *
 * A checkpoint is valid when its id is the sha256 of its key fields, its task is in the
 * plan with the same contract digest, its dependency ids are the checkpoints of its needs,
 * its base is the previous checkpoint's result (the run's base commit for the first), both
 * commits exist, and the result descends from the base.
 */
export type PriorKind = 'complete' | 'failed' | 'incomplete' | 'corrupt';

export interface PriorRun {
  paths: RunPaths;
  /** Its place in the slug's history (runs are listed in this order, never by name). */
  start: RunStart;
  kind: PriorKind;
  /** What the journal's valid records say, folded as they were read (the records are not kept). */
  journal: JournalFold;
  status: JournalStatus;
  /** The scan itself (with the sha256 of a clean journal): a resume's writer takes it if the file is unchanged. */
  scan: ScanResult | undefined;
  /** The class of a `run-failed` receipt. */
  failedClass: string | null;
  /** The reason of a `run-failed` receipt (`never_started`: a never-started run chooseRun closed). */
  failedReason: string | null;
  /** Created but never started: see neverStarted. */
  neverStarted: boolean;
}

export interface Refusal {
  reason: string;
  message: string;
  hint?: string;
}

/** An attempt that started and never closed: a crashed coordinator's leftover. */
export interface OpenAttempt {
  taskId: string;
  attempt: number;
  ownerTag: string;
  evidenceDir: string;
  /** The attempt's git worktree ('' when its dir could not be rendered). */
  worktree: string;
  /** Whether any command-settled was journaled (its usage is then already counted). */
  settled: boolean;
}

export interface RecoveredRun {
  started: RunStartedData;
  /** Valid checkpoints in chain order (adopted ones included). */
  checkpoints: CheckpointData[];
  /** The last valid result: where the integration branch is reset to. */
  head: string;
  /** Highest attempt number per task, so new attempts get fresh numbers and directories. */
  attempts: Map<string, number>;
  /**
   * Worktrees of the task's attempts that did not close as a success (failed, interrupted,
   * crashed, or still open): removed once the task is checkpointed.
   */
  trees: Map<string, Array<{ attempt: number; worktree: string }>>;
  open: OpenAttempt[];
  /** Attempts lost to coordinator crashes so far, per task. */
  crashes: Map<string, number>;
  /** The plan digest last journaled (run-started or the latest plan-amended). */
  planDigest: string;
  /** The last coordinator that drove the run (run-started, then each coordinator-crashed or journal-failed). */
  coordinator: ProcessIdentity | null;
  usage: UsageTotals;
  costUsd: number;
  attemptsTotal: number;
  /** Failure histories per task, from repair-decided records (reset by operator-retry). */
  histories: Map<string, TaskHistory>;
  /** The last failure of each task that was to be retried (its evidence goes into the next prompt). */
  lastFailure: Map<string, { attempt: number; failure: AttemptFailureData }>;
  /** Loop rounds journaled by attempts a coordinator crash ended, per task. */
  roundsUsed: Map<string, number>;
  /**
   * Tasks repair stopped (and no operator-retry since): never redispatched on the same
   * inputs. `contractDigest` is the contract the stopped attempt ran under (its
   * attempt-started record); null when that record did not say.
   */
  stopped: Map<string, StoppedTask>;
}

export interface StoppedTask {
  class: string;
  reason: string;
  detail: string;
  contractDigest: string | null;
}

// Every run of the slug in start order (oldest first), with how it ended. Each journal is
// read once, every record parsed and checked (readJournal's checks), and folded as it is read.
export async function inspectRuns(slug: SlugPaths): Promise<PriorRun[]> {
  const runs: PriorRun[] = [];
  for (const id of await runDirNames(slug)) {
    const paths = runPaths(slug, id);
    let journal = new JournalFold();
    let status: JournalStatus;
    let scan: ScanResult | undefined;
    let createdAt: string | null = null;
    try {
      const fold = journal;
      scan = await scanJournal(paths.journal, {
        onRecord: (record, _json, offset) => {
          if (record.seq === 0) createdAt = record.ts;
          fold.add(record, offset);
        },
        digest: true,
      });
      status = scan.status;
    } catch (e) {
      journal = new JournalFold();
      status = { kind: 'corrupt', offset: 0, seq: null, reason: e instanceof Error ? e.message : String(e) } as JournalStatus;
    }
    const terminal = journal.terminal;
    const kind: PriorKind =
      status.kind === 'corrupt'
        ? 'corrupt'
        : terminal === undefined
          ? 'incomplete'
          : terminal.type === 'run-complete'
            ? 'complete'
            : 'failed';
    const { class: cls, reason } = (terminal?.data ?? {}) as { class?: unknown; reason?: unknown };
    runs.push({
      paths,
      start: { runId: id, startOrder: headerStartOrder(scan?.header), createdAt: scan?.header !== undefined ? createdAt : null },
      kind,
      journal,
      status,
      scan,
      failedClass: typeof cls === 'string' ? cls : null,
      failedReason: typeof reason === 'string' ? reason : null,
      neverStarted: kind === 'incomplete' && neverStarted(scan, id),
    });
  }
  return runs.sort((a, b) => compareRunStarts(a.start, b.start));
}

/**
 * Whether a run was created but never started: its coordinator died between creating the
 * journal and making `run-started` durable, so nothing was dispatched (run-started is
 * journaled before anything else a run does). Only two shapes qualify: the header alone
 * (with the run's own id; a torn line after it is a crash mid-append of run-started), and
 * no whole record at all (zero bytes, or a torn first line — the journal writer links the
 * header into place whole, so this is a file system's doing, not runplan's). Corruption, a
 * header naming another run, or any record after the header is not this and stays a
 * refusal (recoverRun).
 */
function neverStarted(scan: ScanResult | undefined, runId: string): boolean {
  if (scan === undefined || scan.status.kind === 'corrupt' || scan.terminal) return false;
  if (scan.count === 0) return true;
  return scan.count === 1 && scan.header?.runId === runId;
}

/**
 * One pass over a run's journal records, in order, keeping only what a resume or a
 * continuation needs: the first terminal record, the first run-started, every checkpoint
 * (its own and adopted ones), and the per-task state of attempts, usage, failures and
 * repair decisions. Records before run-started (none, in journals runplan writes) are held
 * until it arrives, because the totals start from what it carried.
 */
export class JournalFold {
  terminal: JournalRecord | undefined;
  started: RunStartedData | undefined;
  readonly checkpoints: CheckpointData[] = [];
  readonly attempts = new Map<string, number>();
  readonly open = new Map<string, OpenAttempt>();
  readonly trees = new Map<string, Array<{ attempt: number; worktree: string }>>();
  /** The first attempt-started that repeats a task and attempt number already started: the journal's own records collide. */
  collision: { taskId: string; attempt: number; seq: number } | undefined;
  private readonly startedKeys = new Set<string>();
  readonly crashes = new Map<string, number>();
  usage: UsageTotals = ZERO_USAGE;
  costUsd = 0;
  readonly histories = new Map<string, TaskHistory>();
  readonly lastFailure = new Map<string, { attempt: number; failure: AttemptFailureData }>();
  readonly stopped = new Map<string, StoppedTask>();
  attemptsTotal = 0;
  planDigest = '';
  coordinator: ProcessIdentity | null = null;
  private readonly closedFailures = new Map<string, AttemptFailureData>();
  private readonly contracts = new Map<string, string>();
  private readonly roundsByAttempt = new Map<string, { taskId: string; rounds: number }>();
  private readonly crashedKeys = new Set<string>();
  private early: JournalRecord[] | undefined = [];
  /** The first record after the header, while no run-started has come (named when a resume refuses). */
  beforeStart: { type: string; seq: number; offset: number | undefined } | undefined;

  add(r: JournalRecord, offset?: number): void {
    if (r.terminal === true) this.terminal ??= r;
    if (this.started === undefined && r.type !== HEADER_TYPE && r.type !== 'run-started')
      this.beforeStart ??= { type: r.type, seq: r.seq, offset };
    if (r.type === 'checkpoint') this.checkpoints.push(r.data as unknown as CheckpointData);
    if (r.type === 'checkpoint-adopted') this.checkpoints.push((r.data as { checkpoint: CheckpointData }).checkpoint);
    if (this.early !== undefined) {
      this.early.push(r);
      if (r.type !== 'run-started') return;
      const started = r.data as unknown as RunStartedData;
      this.started = started;
      this.usage = addUsage(ZERO_USAGE, { ...ZERO_USAGE, ...(started.usageCarried ?? {}) });
      this.costUsd = started.costCarried ?? 0;
      this.planDigest = started.planDigest;
      this.coordinator = started.coordinator ?? null;
      const early = this.early;
      this.early = undefined;
      for (const record of early) this.fold(record);
      return;
    }
    this.fold(r);
  }

  private fold(r: JournalRecord): void {
    const d = r.data as Record<string, unknown>;
    const key = `${String(d.taskId)}.${String(d.attempt)}`;
    switch (r.type) {
      case 'attempt-started': {
        this.attemptsTotal++;
        const taskId = String(d.taskId);
        if (this.startedKeys.has(key)) this.collision ??= { taskId, attempt: Number(d.attempt), seq: r.seq };
        this.startedKeys.add(key);
        this.attempts.set(taskId, Math.max(this.attempts.get(taskId) ?? 0, Number(d.attempt)));
        const worktree = typeof d.worktree === 'string' ? d.worktree : '';
        this.open.set(key, {
          taskId,
          attempt: Number(d.attempt),
          ownerTag: String(d.ownerTag),
          evidenceDir: String(d.evidenceDir),
          worktree,
          settled: false,
        });
        if (worktree !== '') this.trees.set(taskId, [...(this.trees.get(taskId) ?? []), { attempt: Number(d.attempt), worktree }]);
        if (typeof d.contractDigest === 'string') this.contracts.set(key, d.contractDigest);
        break;
      }
      case 'attempt-closed':
        this.open.delete(key);
        if (d.outcome === 'success') {
          const left = this.trees.get(String(d.taskId))?.filter((t) => t.attempt !== Number(d.attempt));
          if (left !== undefined) this.trees.set(String(d.taskId), left);
        }
        if (d.failure !== null && typeof d.failure === 'object') this.closedFailures.set(key, d.failure as AttemptFailureData);
        if (d.reason === 'coordinator_crashed') {
          this.crashes.set(String(d.taskId), (this.crashes.get(String(d.taskId)) ?? 0) + 1);
          this.crashedKeys.add(key);
        }
        // An attempt a failed journal write ended: its rounds are used, but it is no crash.
        if (d.reason === 'journal_failed') this.crashedKeys.add(key);
        break;
      case 'usage':
        if (d.usage !== null && typeof d.usage === 'object')
          this.usage = addUsage(this.usage, { ...ZERO_USAGE, ...(d.usage as UsageTotals) });
        if (typeof d.costUsd === 'number') this.costUsd += d.costUsd;
        break;
      case 'command-settled':
        if (this.open.has(key)) this.open.get(key)!.settled = true;
        if (d.usage !== null && typeof d.usage === 'object')
          this.usage = addUsage(this.usage, { ...ZERO_USAGE, ...(d.usage as UsageTotals) });
        if (typeof d.costUsd === 'number') this.costUsd += d.costUsd;
        break;
      case 'coordinator-crashed':
      case 'journal-failed':
        this.coordinator = (d.coordinator as ProcessIdentity | undefined) ?? this.coordinator;
        break;
      case 'repair-decided': {
        const task = String(d.taskId);
        this.histories.set(
          task,
          recordFailure(this.histories.get(task) ?? emptyHistory(), {
            class: d.class as AttemptFailureData['class'],
            fingerprint: String(d.fingerprint),
          }),
        );
        const failure = this.closedFailures.get(key);
        if (d.action === 'retry' && failure !== undefined) this.lastFailure.set(task, { attempt: Number(d.attempt), failure });
        else this.lastFailure.delete(task);
        if (d.action === 'stop') {
          this.stopped.set(task, {
            class: String(d.class),
            reason: String(d.stopReason),
            detail: String(d.detail),
            contractDigest: this.contracts.get(key) ?? null,
          });
        }
        break;
      }
      case 'round-done':
        this.roundsByAttempt.set(key, {
          taskId: String(d.taskId),
          rounds: Math.max(this.roundsByAttempt.get(key)?.rounds ?? 0, Number(d.round)),
        });
        break;
      case 'operator-retry':
        this.histories.delete(String(d.taskId));
        this.stopped.delete(String(d.taskId));
        break;
      case 'checkpoint':
        this.lastFailure.delete(String(d.taskId));
        break;
      case 'plan-amended':
        if (typeof d.to === 'string') this.planDigest = d.to;
        break;
      default:
        break;
    }
  }

  /** Loop rounds of attempts that are still open or that a coordinator crash closed, per task. */
  roundsUsed(): Map<string, number> {
    const roundsUsed = new Map<string, number>();
    for (const [key, r] of this.roundsByAttempt) {
      if (this.open.has(key) || this.crashedKeys.has(key)) roundsUsed.set(r.taskId, Math.max(roundsUsed.get(r.taskId) ?? 0, r.rounds));
    }
    return roundsUsed;
  }
}

// Recovers a run's state. `resume`: every doubt is a refusal. `continue`: the valid prefix.
// `digests` are the plan's task contract digests when the caller has them already.
export async function recoverRun(
  prior: PriorRun,
  plan: Plan,
  repo: string,
  mode: 'resume' | 'continue',
  digests: Map<string, string> = taskContractDigests(plan),
): Promise<{ ok: true; value: RecoveredRun } | { ok: false; error: Refusal }> {
  const id = prior.paths.runId;
  const fresh = `runplan run ${plan.file} --fresh`;
  const refuse = (reason: string, message: string, hint = fresh) => ({ ok: false as const, error: { reason, message, hint } });
  if (prior.status.kind === 'corrupt') {
    const s = prior.status;
    return refuse(
      'journal_corrupt',
      `the journal of run ${id} is corrupt at offset ${s.offset} (seq ${s.seq ?? '?'}): ${s.reason}: ${prior.paths.journal}`,
    );
  }
  const fold = prior.journal;
  const started = fold.started;
  if (started === undefined) {
    const first = fold.beforeStart;
    const at = first !== undefined ? ` (seq ${first.seq}, a ${first.type} record at offset ${first.offset ?? '?'}, comes before it)` : '';
    return refuse('run_unreadable', `run ${id} has no run-started record${at}: ${prior.paths.journal}`);
  }
  if (fold.collision !== undefined) {
    const c = fold.collision;
    return refuse(
      'attempt_collision',
      `run ${id}: attempt ${c.attempt} of task ${c.taskId} is started twice in the journal (again at seq ${c.seq}): ${prior.paths.journal}`,
    );
  }

  const all = fold.checkpoints;
  const shas = [...new Set(all.flatMap((c) => [c.baseCommit, c.resultCommit]).concat(started.baseCommit))];
  // The ancestry graph of every result is asked for while cat-file runs (both read-only);
  // it is used only if no commit turns out missing (else one without the missing ones is).
  const results = all.map((c) => c.resultCommit);
  const early = all.length > 0 ? ancestryOracle(repo, started.baseCommit, results) : undefined;
  const missing = new Set(await missingObjects(repo, shas));
  const byTask = new Map(plan.tasks.map((t) => [t.id, t]));
  const valid: CheckpointData[] = [];
  const ids = new Map<string, string>();
  let head = started.baseCommit;
  if (missing.has(head)) return refuse('commit_missing', `the base commit ${head} of run ${id} is missing from ${repo}`);

  // One rev-list for the whole chain; undefined (git could not say) falls back to one
  // merge-base per pair.
  let oracle: Promise<AncestryOracle | undefined> | undefined;
  const descends = async (ancestor: string, descendant: string): Promise<boolean | undefined> => {
    oracle ??=
      missing.size === 0 && early !== undefined
        ? early
        : ancestryOracle(
            repo,
            started.baseCommit,
            results.filter((sha) => !missing.has(sha)),
          );
    return (await oracle)?.(ancestor, descendant) ?? (await isAncestor(repo, ancestor, descendant));
  };
  for (const cp of all) {
    const problem = await checkpointProblem(cp, plan, byTask, digests, ids, head, missing, descends);
    if (problem !== undefined) {
      if (mode === 'continue') break;
      return refuse(problem.reason, `run ${id}: ${problem.message}`, problem.hint ?? fresh);
    }
    valid.push(cp);
    ids.set(cp.taskId, cp.id);
    head = cp.resultCommit;
  }

  return {
    ok: true,
    value: {
      stopped: fold.stopped,
      roundsUsed: fold.roundsUsed(),
      started,
      checkpoints: valid,
      head,
      attempts: fold.attempts,
      trees: fold.trees,
      open: [...fold.open.values()],
      crashes: fold.crashes,
      planDigest: fold.planDigest,
      coordinator: fold.coordinator,
      usage: fold.usage,
      costUsd: fold.costUsd,
      attemptsTotal: fold.attemptsTotal,
      histories: fold.histories,
      lastFailure: fold.lastFailure,
    },
  };
}

// Why a checkpoint cannot be trusted (undefined: it can).
async function checkpointProblem(
  cp: CheckpointData,
  plan: Plan,
  byTask: Map<string, Plan['tasks'][number]>,
  digests: Map<string, string>,
  ids: Map<string, string>,
  head: string,
  missing: Set<string>,
  descends: (ancestor: string, descendant: string) => Promise<boolean | undefined>,
): Promise<Refusal | undefined> {
  const recomputed = checkpointId(cp);
  if (recomputed !== cp.id)
    return {
      reason: 'checkpoint_invalid',
      message: `the checkpoint of task ${cp.taskId} does not match its id (${cp.id.slice(0, 12)} vs ${recomputed.slice(0, 12)})`,
    };
  const task = byTask.get(cp.taskId);
  if (task === undefined)
    return {
      reason: 'task_removed',
      message: `completed task ${cp.taskId} is no longer in ${plan.file}`,
      hint: 'restore the task in the plan, or start over with --fresh',
    };
  if (ids.has(cp.taskId)) return { reason: 'checkpoint_invalid', message: `task ${cp.taskId} has two checkpoints` };
  const digest = digests.get(cp.taskId)!;
  if (digest !== cp.taskContractDigest) {
    return {
      reason: 'contract_changed',
      message: `completed task ${cp.taskId} changed its contract: journaled ${cp.taskContractDigest.slice(0, 16)}, plan now ${digest.slice(0, 16)}`,
      hint: `restore ${plan.file} as it was, or start over: runplan run ${plan.file} --fresh`,
    };
  }
  const expectedDeps = task.needs.map((n) => ids.get(n));
  if (expectedDeps.some((d) => d === undefined) || JSON.stringify(expectedDeps) !== JSON.stringify(cp.dependencyCheckpointIds)) {
    return {
      reason: 'dependency_mismatch',
      message: `the checkpoint of task ${cp.taskId} names dependency checkpoints that are not the valid checkpoints of its needs (${task.needs.join(', ')})`,
    };
  }
  if (cp.baseCommit !== head) {
    return {
      reason: 'not_descendant',
      message: `the checkpoint of task ${cp.taskId} builds on ${cp.baseCommit.slice(0, 12)}, not on the previous result ${head.slice(0, 12)}`,
    };
  }
  for (const sha of [cp.baseCommit, cp.resultCommit]) {
    if (missing.has(sha))
      return { reason: 'commit_missing', message: `commit ${sha} of task ${cp.taskId}'s checkpoint is missing from the repository` };
  }
  if (cp.resultCommit !== cp.baseCommit && (await descends(cp.baseCommit, cp.resultCommit)) !== true) {
    return {
      reason: 'not_descendant',
      message: `the result ${cp.resultCommit.slice(0, 12)} of task ${cp.taskId} does not descend from its predecessor ${cp.baseCommit.slice(0, 12)}`,
    };
  }
  return undefined;
}
