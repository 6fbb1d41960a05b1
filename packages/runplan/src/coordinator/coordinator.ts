import { relative } from 'node:path';
import { HEADER_TYPE } from '@runplan/journal';
import { maskSecrets } from '../plan/secrets.js';
import { RunJournal } from '../events/sink.js';
import type { Start } from '../resume/choose.js';
import { takeOver } from '../resume/take-over.js';
import { adopt, operatorRetries } from '../resume/continuation.js';
import { registeredWorktrees } from '../host/git.js';
import { diskFailure, diskFaultOf } from '../host/disk.js';
import { afterFailure } from './after-failure.js';
import { nextAttempt } from './attempt-numbers.js';
import { resetBranch } from './branch.js';
import { Integration, JournalFailure } from './context.js';
import { dispatch } from './dispatch.js';
import { landResult } from './land-result.js';
import { RunLedger } from './ledger.js';
import type { RunParts } from './parts.js';
import { completeReceipt, failedReceipt } from './receipts.js';
import { retain } from './retain.js';
import { runStarted } from './run-started.js';
import { schedule, type ScheduleEnd } from './scheduler.js';
import { announceStart, startInfo } from './start-info.js';
import type { RunEnd, StopCause } from './types.js';
import { verdict } from './verdict.js';
import type { CoordinatorInit } from './coordinator-init.js';
import { wireRun } from './wire.js';
import { removeEarlierTrees } from './worktrees.js';
import { RunRounds } from '../attempt/round-refs.js';
import type { RefFailedData } from '../events/types.js';
import { keepResult, pruneFailedResults } from './result-ref.js';
import { RunFold } from './run-fold.js';
import { FoldSnapshots } from './fold-snapshots.js';
import type { RunView } from '../events/view.js';
import { planCopyFacts, type PlanCopyFacts } from '../observe/report-data.js';

export type { CoordinatorInit } from './coordinator-init.js';

/** One logical run from `run-started` to its receipt: wires the journal, the ledger and the scheduler. */
export class Coordinator {
  /** Aborted on the operator's signal or a failed write: every attempt is torn down. */
  readonly abort = new AbortController();
  /** When this coordinator started: the receipt duration and the workdir template's run.date/run.time. */
  readonly started = new Date();
  readonly integration: Integration;
  readonly ledger = new RunLedger();
  readonly journal: RunJournal;
  /** The slug's loop-round refs: listed once for the run, however many deletions need them. */
  readonly rounds: RunRounds;
  /** The journal folded as it is written: the live table and the report at the receipt (set once drive starts). */
  fold: RunFold | undefined;

  constructor(readonly init: CoordinatorInit) {
    const { plan, run, writer, secrets, req } = init;
    this.integration = new Integration(init.baseCommit, `refs/heads/runplan/${plan.slug}`);
    this.rounds = new RunRounds(init.repo, plan.slug);
    const snapshots = new FoldSnapshots(run.journal, writer);
    this.journal = new RunJournal({
      writer,
      secrets,
      abort: this.abort,
      runDir: run.dir,
      journalPath: run.journal,
      onRecord: (record) => {
        this.fold?.add(record);
        snapshots.after(this.fold?.whole(record.seq), record.seq);
        req.onRecord?.(record);
      },
    });
    if (req.signal.aborted) this.abort.abort(req.signal.reason);
    else req.signal.addEventListener('abort', () => this.abort.abort(req.signal.reason), { once: true });
  }

  // Take over or start; operator retries; reset the branch; schedule; finish. Anything
  // thrown ends the run with a receipt (internal_error, or the disk's) unless the journal failed.
  async drive(start: Start, identity: Promise<Record<string, string>>): Promise<RunEnd> {
    const { plan, run, req } = this.init;
    const gitIdentity = await identity;
    this.ledger.attemptFloor = start.attemptFloor;
    for (const [id, total] of start.threadTotals) this.ledger.threadTotals.set(id, total);
    const registered = start.mode !== 'clean' ? await registeredWorktrees(this.init.repo) : new Set<string>();
    const parts = this.wire(gitIdentity, registered);
    this.fold =
      start.mode === 'resume' ? RunFold.resuming(start.recovered.view, start.scanned?.lastSeq) : await RunFold.created(run.journal);
    await announceStart(req, startInfo(plan, run, start, this.fold.view));
    try {
      if (start.mode === 'resume') {
        const stop = await takeOver(parts, start.recovered, start.adopting);
        if (stop !== undefined) return await this.failed(parts, stop);
      } else {
        // The journal holds only its header here: the never-started crash point.
        this.journal.killAfter(HEADER_TYPE, {});
        await this.journal.emit(
          'run-started',
          runStarted(parts, {
            start,
            baseCommit: this.init.baseCommit,
            allowBackground: req.allowBackground,
            resetBudget: req.resetBudget === true,
          }),
        );
        if (start.mode === 'continue') await adopt(parts, start.origin, start.recovered);
        // The budget is checked against the slug's spend (what run-started carried), not the run's.
        this.ledger.usage = start.carried.usage;
        this.ledger.costUsd = start.carried.costUsd;
      }
      // Only a resume of their own run can use a run's loop rounds: every other run's go now.
      await this.refsFailed(await this.rounds.pruneRuns({ except: run.runId }));
      await operatorRetries(parts, req.retry ?? []);
      const branch = await resetBranch(parts);
      if (branch !== undefined) return await this.failed(parts, { failure: branch, task: null, evidence: [] });
      const loops = new Set(plan.tasks.filter((t) => t.until !== undefined).map((t) => t.id));
      const end = await schedule({
        plan,
        ledger: this.ledger,
        jobs: parts.jobs,
        keepGoing: req.keepGoing === true || plan.keepGoing === true,
        signal: this.abort.signal,
        nextAttempt: (taskId) => nextAttempt(parts, taskId),
        dispatch: (task, attempt) => dispatch(parts, task, attempt),
        afterSuccess: async (taskId, attempt, inFlight) => {
          await removeEarlierTrees(parts, taskId);
          // Only a loop (or a crashed loop attempt's durable round) leaves round refs; any other
          // task's would cost a git call each. What is missed here goes at the receipt anyway.
          if (loops.has(taskId) || this.ledger.durableRounds.has(taskId)) await this.refsFailed(await this.rounds.deleteTask(taskId));
          await retain(parts, taskId, attempt, inFlight);
        },
        afterFailure: (task, r) => afterFailure(parts, task, r),
      });
      return await this.finish(parts, end);
    } catch (e) {
      if (e instanceof JournalFailure || this.journal.failure) return this.journalFailed();
      const message = maskSecrets(e instanceof Error ? e.message : String(e), this.init.secrets);
      const fault = diskFaultOf(e);
      if (fault !== undefined) this.journal.diskFailed(fault);
      try {
        if (fault !== undefined) return await this.failed(parts, { failure: diskFailure(fault, 'run'), task: null, evidence: [] });
        const failure = { class: 'engine', reason: 'internal_error', phase: 'run', message, evidenceTail: '' } as const;
        return await this.failed(parts, { failure, task: null, evidence: [] });
      } catch {
        return this.journalFailed();
      }
    }
  }

  // The run's parts, built once: what attempts see (RunContext) over the ledger's maps.
  wire(gitIdentity: Record<string, string>, registeredTrees: ReadonlySet<string>): RunParts {
    return wireRun(this, gitIdentity, registeredTrees);
  }

  // Dispatching stopped: the receipt it calls for (see verdict for the order), landing first on success.
  async finish(parts: RunParts, end: ScheduleEnd): Promise<RunEnd> {
    const { plan, repo, run, req } = this.init;
    const v = verdict(end, {
      journalFailed: this.journal.failure !== undefined,
      diskFault: this.journal.diskFault,
      interrupted: req.signal.aborted ? { reason: req.signal.reason } : undefined,
    });
    if (v.kind === 'journal_failed') return this.journalFailed();
    if (v.kind === 'failed') return this.failed(parts, v.stop);
    let landed: string | null = null;
    if (plan.land !== undefined) {
      const landing = await landResult({
        repo,
        plan,
        runId: run.runId,
        head: this.integration.head,
        branchRef: this.integration.branchRef,
        journal: this.journal,
        signal: this.abort.signal,
        gitIdentity: parts.ctx.gitIdentity,
        refsFailed: (failures) => this.refsFailed(failures),
      });
      if ('stop' in landing) return this.failed(parts, landing.stop);
      landed = landing.landed;
    }
    return this.complete(parts, landed);
  }

  async complete(parts: RunParts, landed: string | null): Promise<RunEnd> {
    const { repo, plan, slug, run } = this.init;
    const unkept = await keepResult(repo, plan.slug, run.runId, this.integration.head);
    await this.refsFailed([
      ...(unkept !== undefined ? [unkept] : []),
      // This result supersedes what failed runs kept; no resume of this run will use its rounds.
      ...(unkept === undefined ? await pruneFailedResults(repo, slug, run.runId) : []),
      ...(await this.rounds.pruneRuns({ only: run.runId })),
    ]);
    const receipt = completeReceipt(parts, landed);
    try {
      await this.journal.complete(receipt);
    } catch {
      return this.journalFailed();
    }
    return { kind: 'complete', receipt, ...this.afterReceipt() };
  }

  async failed(parts: RunParts, stop: StopCause): Promise<RunEnd> {
    // A run with a receipt is continued, never resumed: its loop rounds have served.
    if (this.journal.failure === undefined) await this.refsFailed(await this.rounds.pruneRuns({ only: this.init.run.runId }));
    const receipt = failedReceipt(parts, stop, this.init.req.signal.reason);
    try {
      await this.journal.failed(receipt);
    } catch {
      return this.journalFailed();
    }
    return { kind: 'failed', receipt, ...this.afterReceipt() };
  }

  // What a receipt's end hands on: the journal, the fold of every record (the report's, when
  // it saw them all) and the plan copy's facts.
  afterReceipt(): { journal: string; view: RunView | undefined; planCopy: PlanCopyFacts | undefined } {
    return { journal: this.init.run.journal, view: this.fold?.whole(this.init.writer.lastSeq), planCopy: this.planCopyFacts() };
  }

  // The plan copy's needs and budget for the report, from the plan: only when nothing was
  // masked in the copy (maskSecrets masks no empty value), so they equal what it holds.
  planCopyFacts(): PlanCopyFacts | undefined {
    const { plan, run, secrets } = this.init;
    return secrets.some((s) => s !== '') ? undefined : planCopyFacts(run.planCopy, plan);
  }

  // Each ref git would not write or delete, journaled (the receipt lists them too).
  async refsFailed(failures: RefFailedData[]): Promise<void> {
    for (const failure of failures) await this.journal.emit('ref-failed', failure);
  }

  // Exit 5: the journal refused a write, so there is no receipt; the message names the journal.
  journalFailed(): RunEnd {
    const journal = this.init.run.journal;
    const message = this.journal.failure?.message ?? 'the journal refused a write';
    return { kind: 'journal_failed', message: `${message} (${relative(process.cwd(), journal) || journal})`, journal };
  }
}
