import { HEADER_TYPE, REPAIRED_TYPE, type JournalRecord } from '@runplan/journal';
import type { ProcessIdentity } from '@runplan/settle';
import { emptyHistory, recordFailure, type TaskHistory } from '../repair/index.js';
import { readEvent, taskCountOf, type RunEvent } from './read.js';
import { leavesJobsUnverified } from './reasons.js';
import { threadTotalsOf } from './thread-totals.js';
import { nextStep, type TaskStep } from './task-step.js';
import { AttemptLog } from './attempt-log.js';
import { DurableRounds } from './durable-rounds.js';
import { markSettled, openAttemptOf } from './open-attempt.js';
import { RunSpend } from './spend.js';
import { malformedField, stoppedTaskOf, type OpenAttempt, type StoppedTask } from './view-types.js';
import type {
  AttemptFailureData,
  CheckpointData,
  DurableRound,
  ProviderWaitData,
  RunCompleteData,
  RunFailedData,
  RunStartedData,
  UsageTotals,
} from './types.js';

export type { OpenAttempt, StoppedTask } from './view-types.js';
export { resetHasPassed } from './view-types.js';

/**
 * The one reading of a run's journal: records are folded as they stream by (scanJournal's
 * onRecord; none is kept), into what resume, continuation, `status`, progress and `stop`
 * need — the receipt, tasks done and adopted, attempts open and closed, usage and cost
 * including what run-started carried from the runs a continuation continues, failure
 * histories and fingerprints, loop rounds. Spend starts from what run-started carried
 * (events/spend.ts); everything else is folded in journal order as it comes.
 */
export class RunView {
  /** The first terminal record: the run's receipt. */
  terminal: JournalRecord | undefined;
  /** The first run-started: what the run is. */
  started: RunStartedData | undefined;
  /** When run-started was journaled: elapsed time counts from it. */
  startedTs: string | undefined;
  /** When the journal was created (its header). */
  createdAt: string | undefined;
  /** The ts of the last record read. */
  lastSeen: string | undefined;
  /** The ts of the last record that is not the journal's own repair note: when the run was last heard from. */
  lastEvent: string | undefined;
  /** The first record after the header, while no run-started has come (named when a resume refuses). */
  beforeStart: { type: string; seq: number; offset: number | undefined } | undefined;
  /** Checkpoints in journal order, the run's own and adopted ones. */
  readonly checkpoints: CheckpointData[] = [];
  /** Highest attempt number per task. */
  readonly attempts = new Map<string, number>();
  attemptsTotal = 0;
  /** Attempts started and not closed, by `task.attempt`. */
  readonly open = new Map<string, OpenAttempt>();
  /** Worktrees of each task's attempts that did not close as a success. */
  readonly trees = new Map<string, Array<{ attempt: number; worktree: string }>>();
  /** Attempts still open when their coordinator was found dead: closed later, their worktrees not yet removed. */
  private readonly leftOpen = new Set<string>();
  /** The first attempt-started that repeats a task and attempt number already started: the journal's own records collide. */
  collision: { taskId: string; attempt: number; seq: number } | undefined;
  /** The first attempt-started whose task is not a string or whose attempt is not a positive integer (not folded). */
  malformed: { field: 'taskId' | 'attempt'; value: unknown; seq: number } | undefined;
  /** The first attempt closed with its Slurm jobs not verified gone (slurm_unreachable, slurm_cancel_failed): its reason. */
  jobsUnverified: string | undefined;
  /** Attempts lost to coordinator crashes, per task. */
  readonly crashes = new Map<string, number>();
  /** Failure histories (classes, fingerprints) per task, from repair-decided; operator-retry resets them. */
  readonly histories = new Map<string, TaskHistory>();
  /** The last failure of each task that was to be retried (its evidence goes into the next prompt). */
  readonly lastFailure = new Map<string, { attempt: number; failure: AttemptFailureData }>();
  /** Tasks repair stopped, with the contract the stopped attempt ran under. */
  readonly stopped = new Map<string, StoppedTask>();
  /** The last running total of each agent thread (codex), from command-settled / usage `threads`. */
  readonly threadTotals = new Map<string, UsageTotals>();
  /** Tasks held back for the provider (provider-wait) whose next attempt has not started yet. */
  readonly providerWaits = new Map<string, ProviderWaitData>();
  /** Where each task named by a record stands, in the order they were first named. */
  readonly tasks = new Map<string, TaskStep>();
  /** Every attempt's phases, spend, close and repair verdict, and the crash/resume marks: what `runplan report` draws. */
  readonly log = new AttemptLog();
  private readonly startedKeys = new Set<string>();
  private readonly closedFailures = new Map<string, AttemptFailureData>();
  private readonly contracts = new Map<string, string>();
  private readonly rounds = new DurableRounds();
  private readonly spent = new RunSpend();
  private amendedTo: string | undefined;
  private tookOver: ProcessIdentity | undefined;

  /** Tokens spent so far, from what run-started carried on. */
  get usage(): UsageTotals {
    return this.spent.usage;
  }

  /** Dollars spent so far, from what run-started carried on. */
  get costUsd(): number {
    return this.spent.costUsd;
  }

  /** The plan digest last journaled (run-started, or the latest plan-amended). */
  get planDigest(): string {
    return this.amendedTo ?? this.started?.planDigest ?? '';
  }

  /** The last coordinator that drove the run (run-started, then each coordinator-crashed or journal-failed). */
  get coordinator(): ProcessIdentity | null {
    return this.tookOver ?? this.started?.coordinator ?? null;
  }

  /** How many tasks the plan has (run-started's count). */
  get taskCount(): number {
    return this.started !== undefined ? taskCountOf(this.started) : 0;
  }

  /** The receipt when it is a run-complete. */
  get completeReceipt(): RunCompleteData | undefined {
    const e = this.terminal !== undefined ? readEvent(this.terminal) : undefined;
    return e?.type === 'run-complete' ? e.data : undefined;
  }

  /** The receipt when it is a run-failed. */
  get failedReceipt(): RunFailedData | undefined {
    const e = this.terminal !== undefined ? readEvent(this.terminal) : undefined;
    return e?.type === 'run-failed' ? e.data : undefined;
  }

  add(r: JournalRecord, offset?: number): void {
    if (r.seq === 0) this.createdAt = r.ts;
    this.lastSeen = r.ts;
    if (r.type !== REPAIRED_TYPE) this.lastEvent = r.ts;
    if (r.terminal === true) this.terminal ??= r;
    if (this.started === undefined && r.type !== HEADER_TYPE && r.type !== 'run-started')
      this.beforeStart ??= { type: r.type, seq: r.seq, offset };
    const e = readEvent(r);
    if (e === undefined) return;
    if (typeof r.data.taskId === 'string') this.tasks.set(r.data.taskId, nextStep(this.tasks.get(r.data.taskId), e));
    this.log.add(e);
    this.fold(e);
  }

  // Tasks done: every task with a checkpoint, its own or adopted (what the receipt counts).
  tasksDone(): number {
    return new Set(this.checkpoints.map((c) => c.taskId)).size;
  }

  // Tasks with an attempt open, in the order their attempts started.
  current(): string[] {
    return [...new Set([...this.open.values()].map((a) => a.taskId))];
  }

  /** The last durable loop round of attempts that are still open or that a coordinator crash closed, per task. */
  durableRounds(): Map<string, DurableRound> {
    return this.rounds.ofTasks(this.open);
  }

  private fold(e: RunEvent): void {
    switch (e.type) {
      case 'run-started': {
        if (this.started !== undefined) break;
        this.started = e.data;
        this.startedTs = e.ts;
        this.spent.carry(e.data);
        break;
      }
      case 'attempt-started': {
        const d = e.data;
        const field = malformedField(d);
        if (field !== undefined) {
          this.malformed ??= { field, value: d[field], seq: e.seq };
          break;
        }
        const key = `${d.taskId}.${d.attempt}`;
        this.attemptsTotal++;
        this.providerWaits.delete(d.taskId);
        if (this.startedKeys.has(key)) this.collision ??= { taskId: d.taskId, attempt: d.attempt, seq: e.seq };
        this.startedKeys.add(key);
        this.attempts.set(d.taskId, Math.max(this.attempts.get(d.taskId) ?? 0, d.attempt));
        const open = openAttemptOf(d);
        this.open.set(key, open);
        if (open.worktree !== '')
          this.trees.set(d.taskId, [...(this.trees.get(d.taskId) ?? []), { attempt: d.attempt, worktree: open.worktree }]);
        if (typeof d.contractDigest === 'string') this.contracts.set(key, d.contractDigest);
        break;
      }
      case 'attempt-closed': {
        const d = e.data;
        const key = `${d.taskId}.${d.attempt}`;
        this.open.delete(key);
        // A success the live coordinator journals comes after it removed the attempt's worktree;
        // one closed after its coordinator died (resume, `runplan stop`) still has it.
        if (d.outcome === 'success' && !this.leftOpen.delete(key)) {
          const left = this.trees.get(d.taskId)?.filter((t) => t.attempt !== d.attempt);
          if (left !== undefined) this.trees.set(d.taskId, left);
        }
        if (d.failure !== null && typeof d.failure === 'object') this.closedFailures.set(key, d.failure);
        if (leavesJobsUnverified(d.reason)) this.jobsUnverified ??= d.reason;
        if (d.reason === 'coordinator_crashed') {
          this.crashes.set(d.taskId, (this.crashes.get(d.taskId) ?? 0) + 1);
          this.rounds.crashClosed(key);
        }
        // An attempt a failed journal write ended: its rounds are used, but it is no crash.
        if (d.reason === 'journal_failed') this.rounds.crashClosed(key);
        break;
      }
      // A command's usage, or a crashed attempt's transcript (or round) recounted: counted, and
      // never recounted by a later take-over.
      case 'usage':
      case 'command-settled':
        this.spent.add(e.data.usage, e.data.costUsd);
        for (const t of threadTotalsOf(e.data.threads)) this.threadTotals.set(t.threadId, t.lastTotal);
        markSettled(this.open.get(`${e.data.taskId}.${e.data.attempt}`), e.data.round);
        break;
      case 'coordinator-crashed':
      case 'journal-failed':
      case 'leftovers-ended':
        if (e.type !== 'leftovers-ended') this.tookOver = e.data.coordinator ?? this.tookOver;
        for (const key of this.open.keys()) this.leftOpen.add(key);
        break;
      case 'repair-decided': {
        const d = e.data;
        const key = `${d.taskId}.${d.attempt}`;
        const failed = { class: d.class, fingerprint: String(d.fingerprint), attempt: d.attempt };
        this.histories.set(d.taskId, recordFailure(this.histories.get(d.taskId) ?? emptyHistory(), failed));
        const failure = this.closedFailures.get(key);
        if (d.action === 'retry' && failure !== undefined) this.lastFailure.set(d.taskId, { attempt: d.attempt, failure });
        else this.lastFailure.delete(d.taskId);
        if (d.action === 'stop') this.stopped.set(d.taskId, stoppedTaskOf(d, failure, this.contracts.get(key) ?? null));
        break;
      }
      case 'provider-wait':
        this.providerWaits.set(e.data.taskId, e.data);
        break;
      case 'round-done':
        this.rounds.roundDone(e.data);
        break;
      case 'operator-retry':
        this.histories.delete(e.data.taskId);
        this.stopped.delete(e.data.taskId);
        break;
      case 'checkpoint':
        this.checkpoints.push(e.data);
        this.lastFailure.delete(e.data.taskId);
        break;
      case 'checkpoint-adopted':
        this.checkpoints.push(e.data.checkpoint);
        break;
      case 'plan-amended':
        if (typeof e.data.to === 'string') this.amendedTo = e.data.to;
        break;
      default:
        break;
    }
  }
}
