import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { sleepFor } from '@runplan/common';
import { processIdentity, teardownByTag, type ProcessIdentity } from '@runplan/settle';
import { endLeftovers, newRunOwnerTag } from '../resume/leftovers.js';
import { isStopHolder } from '../observe/status.js';
import { acquireLock, HEADER_TYPE, openWriter, type JournalRecord, type JournalWriter } from '@runplan/journal';
import { loadPlan, topologicalOrder } from '../plan/load.js';
import type { Plan, TaskSpec } from '../plan/types.js';
import { planDigest, taskContractDigests, taskListDigest } from '../plan/digest.js';
import { maskDeep, maskSecrets, planCopy, secretValues } from '../plan/secrets.js';
import { runAttempt, type AttemptResult } from '../attempt/run-attempt.js';
import { workdirVars } from '../attempt/vars.js';
import { prune, render } from '@runplan/workdir';
import { recountedUsage } from '../resume/recount.js';
import type { RecoveredRun } from '../resume/recover.js';
import { chooseRun, type Start } from '../resume/choose.js';
import { failPoint, hits } from '../events/failpoint.js';
import {
  budgetExceeded,
  decideAfterCrash,
  decideRepair,
  emptyHistory,
  failureFingerprint,
  recordFailure,
  type TaskHistory,
} from '../repair/index.js';
import { Integration, JournalFailure, Serial, type Emit, type RunContext } from './context.js';
import {
  addUsage,
  shownCost,
  ZERO_USAGE,
  type AttemptFailureData,
  type EventMap,
  type EventType,
  type RunCompleteData,
  type RunFailedData,
  type UsageTotals,
} from '../events/types.js';
import { commonDir, git, identityEnv, readRef, registeredWorktrees, resolveCommit, toplevel, updateRef } from '../host/git.js';
import { land } from './land.js';
import { ReceiptGuard } from '../events/receipt.js';
import { failureOf } from '../events/failure.js';
import {
  attemptEvidenceDir,
  ensurePrivateDir,
  newRunId,
  slugPaths,
  START_ORDER_FIELD,
  stateRootFor,
  type RunPaths,
  type SlugPaths,
} from '../host/state.js';
import {
  clearJournalFailureNote,
  describeFault,
  diskFailure,
  diskFaultInText,
  diskFaultOf,
  diskReason,
  isDiskReason,
  makeReserve,
  readJournalFailureNote,
  releaseReserve,
  reservePath,
  writeJournalFailureNote,
  type DiskFault,
} from '../host/disk.js';

import type { RunEnd, RunRequest } from './types.js';

export type { RunEnd, RunRequest } from './types.js';

// `runplan run`: validate, take the slug lock, start one logical run and drive it to its
// one receipt. Everything before `run-started` is a refusal that writes nothing.
export async function runPlan(req: RunRequest): Promise<RunEnd> {
  // Which repository (and its git dir) does not depend on what the plan says, only on where
  // it is (plan.dir is the plan file's directory): git is asked while the plan loads, and
  // the answers are read in the same order as before, after the plan is known to be valid.
  const repoAt = req.repo ?? dirname(resolve(req.planFile));
  const asked = toplevel(repoAt).then(async (repo) => ({ repo, common: repo === undefined ? undefined : await commonDir(repo) }));
  const loaded = await loadPlan(req.planFile);
  if (!loaded.ok) {
    await asked;
    return { kind: 'invalid_plan', file: req.planFile, problems: loaded.error };
  }
  const plan = loaded.value;

  const { repo, common } = await asked;
  if (repo === undefined) {
    return {
      kind: 'refused',
      reason: 'not_a_repository',
      message: `${req.repo ?? plan.dir} is not inside a git work tree`,
      hint: 'pass --repo DIR',
    };
  }
  if (common === undefined) return { kind: 'refused', reason: 'not_a_repository', message: `no git dir for ${repo}` };
  const baseCommit = await resolveCommit(repo, plan.base);
  if (baseCommit === undefined) {
    return { kind: 'refused', reason: 'base_missing', message: `base "${plan.base}" of ${plan.file} names no commit in ${repo}` };
  }
  // Whether git has an identity for the commits attempts make: asked now, read at dispatch.
  const identity = identityEnv(repo);
  const slug = slugPaths(stateRootFor(common, req.stateDir), plan.slug);
  try {
    await ensurePrivateDir(slug.dir);
  } catch (e) {
    const fault = diskFaultOf(e, slug.dir);
    if (fault !== undefined) return refusedForDisk(fault, 'cannot create the state dir');
    return { kind: 'refused', reason: 'state_unwritable', message: `cannot create ${slug.dir}: ${(e as Error).message}` };
  }
  const runId = newRunId();
  const lock = await acquireLock(slug.dir, {
    identityPath: slug.identity,
    breakLock: req.breakLock ?? false,
    details: { runId, planFile: plan.file, repo },
  });
  if (!lock.ok) {
    if (lock.error.reason === 'lock_held') {
      const h = lock.error.holder;
      const who = h !== undefined ? `pid ${h.pid} (start time ${h.startTime}, since ${h.acquiredAt})` : 'another process';
      const doing = isStopHolder(h) ? 'being stopped by `runplan stop`,' : 'being run by';
      return { kind: 'locked', holder: h, message: `slug ${plan.slug} is ${doing} ${who}: ${slug.dir}` };
    }
    const fault = diskFaultOf({ error: lock.error });
    if (fault !== undefined) return refusedForDisk(fault, 'the slug lock was not taken; nothing was started');
    return {
      kind: 'refused',
      reason: lock.error.reason,
      message: lock.error.message,
      ...(lock.error.reason === 'foreign_host' ? { hint: 'pass --break-lock if that host is gone' } : {}),
    };
  }
  try {
    const contracts = taskContractDigests(plan);
    const chosen = await chooseRun(slug, plan, repo, req, runId, contracts);
    if (!chosen.ok) return chosen.end;
    for (const line of chosen.notices) req.onNotice?.(line);
    return await startRun(plan, repo, slug, chosen.value, baseCommit, contracts, identity, req);
  } catch (e) {
    // A write refused before the run started (closing earlier runs, the plan copy): nothing ran.
    const fault = diskFaultOf(e);
    if (fault !== undefined) return refusedForDisk(fault, 'nothing was started');
    throw e;
  } finally {
    await lock.value.release();
  }
}

// A disk failure before run-started: a refusal (exit 3) that names the errno and the path.
function refusedForDisk(fault: DiskFault, what: string): RunEnd {
  return {
    kind: 'refused',
    reason: diskReason(fault.errno),
    message: `${describeFault(fault)}; ${what}`,
    hint: 'make room on that file system, then run the same command again',
  };
}

// Resolves undefined after `ms`, however long (a provider's reset may be days away), or at
// once when the run is aborted (the scheduler then looks again and stops dispatching): a
// delayed retry's turn.
async function wake(ms: number, signal: AbortSignal): Promise<undefined> {
  await sleepFor(Math.max(0, ms), signal);
  return undefined;
}

async function startRun(
  plan: Plan,
  repo: string,
  slug: SlugPaths,
  start: Start,
  baseCommit: string,
  contracts: Map<string, string>,
  identity: Promise<Record<string, string>>,
  req: RunRequest,
): Promise<RunEnd> {
  const { run } = start;
  const secrets = secretValues(plan);
  const digest = planDigest(plan);
  // The run dir, the plan copy and the disk reserve come before the journal: a disk that
  // refuses them is a refusal (exit 3) naming the errno and the path; nothing started.
  const before: Array<[string, () => Promise<unknown>]> = [
    [run.dir, () => ensurePrivateDir(run.dir)],
    [
      run.planCopy,
      () => writeFileAtomic(run.planCopy, maskSecrets(JSON.stringify(planCopy(plan), null, 2), secrets) + '\n', { mode: 0o600 }),
    ],
    [reservePath(run.dir), () => makeReserve(run.dir)],
  ];
  for (const [path, write] of before) {
    try {
      await write();
    } catch (e) {
      const fault = diskFaultOf(e, path);
      if (fault === undefined) throw e;
      await releaseReserve(run.dir);
      return refusedForDisk(fault, 'nothing was started');
    }
  }
  try {
    const fs = req.journalFs !== undefined ? { fs: req.journalFs } : {};
    // A resume hands the writer the scan that read the journal: it is used only if the file is still exactly those bytes.
    const opened = await openWriter(
      run.journal,
      start.mode === 'resume'
        ? { create: false, ...fs, ...(start.scanned ? { scanned: start.scanned } : {}) }
        : { create: true, runId: run.runId, headerFields: { [START_ORDER_FIELD]: start.startOrder }, ...fs },
    );
    if (!opened.ok) {
      if (start.mode === 'resume')
        return {
          kind: 'refused',
          reason: opened.error.reason,
          message: `cannot resume ${run.runId}: ${opened.error.message}`,
          hint: `runplan run ${plan.file} --fresh`,
        };
      return { kind: 'journal_failed', message: opened.error.message, journal: run.journal };
    }
    const writer = opened.value;
    const base = start.mode === 'clean' ? baseCommit : start.recovered.started.baseCommit;
    try {
      const coordinator = new Coordinator(plan, repo, slug, run, base, writer, secrets, digest, contracts, req);
      const end = await coordinator.drive(start, identity);
      if (end.kind === 'journal_failed') await coordinator.noteJournalFailure();
      return end;
    } finally {
      await writer.close().catch(() => undefined);
    }
  } finally {
    await releaseReserve(run.dir);
  }
}

type Settled = { kind: 'attempt'; taskId: string; result: AttemptResult } | { kind: 'journal'; taskId: string; error: Error };

/** One logical run from `run-started` to its receipt. */
class Coordinator {
  readonly abort = new AbortController();
  readonly integration: Integration;
  readonly checkpoints = new Map<string, string>();
  /** Highest attempt number per task in this run (new attempts take the next free one). */
  readonly attempts = new Map<string, number>();
  /** Highest attempt number per task in the slug's history: numbering never goes back under it. */
  attemptFloor = new Map<string, number>();
  /** Attempts this run dispatched (a resume counts the ones before the crash too). */
  attemptCount = 0;
  /** Worktrees of each task's attempts that did not succeed: removed once it is checkpointed. */
  readonly trees = new Map<string, Array<{ attempt: number; worktree: string }>>();
  /** Worktrees git has registered, read at a resume or continuation (attempt numbers never reuse one). */
  registeredTrees = new Set<string>();
  readonly receipt: ReceiptGuard;
  readonly started = new Date();
  usage: UsageTotals = ZERO_USAGE;
  costUsd = 0;
  journalError: Error | undefined;
  /** The first write the file system refused (the run stops with disk_full / io_error). */
  diskFault: DiskFault | undefined;
  /** Whether the disk reserve was given back after the disk failure. */
  roomMade = false;
  readonly fail = failPoint();
  /** Failure history per task (counts and fingerprints), rebuilt from the journal on resume. */
  readonly histories = new Map<string, TaskHistory>();
  /** The last failure of a task that will be retried: its evidence goes into the next prompt. */
  readonly lastFailure = new Map<string, { attempt: number; failure: AttemptFailureData }>();
  /** Loop rounds used by crashed attempts (a resumed loop gets the rounds that are left). */
  readonly roundsUsed = new Map<string, number>();
  readonly worktrees = new Serial();

  constructor(
    readonly plan: Plan,
    readonly repo: string,
    readonly slug: SlugPaths,
    readonly run: RunPaths,
    readonly baseCommit: string,
    readonly writer: JournalWriter,
    readonly secrets: string[],
    readonly planDigest: string,
    readonly contracts: Map<string, string>,
    readonly req: RunRequest,
  ) {
    this.integration = new Integration(baseCommit, `refs/heads/runplan/${plan.slug}`);
    this.receipt = new ReceiptGuard(async (type, data) => {
      await this.makeRoom();
      let record: JournalRecord;
      try {
        record = await this.writer.appendTerminal(type, maskDeep(data, this.secrets) as unknown as Record<string, unknown>);
      } catch (e) {
        this.journalError ??= e instanceof Error ? e : new Error(String(e));
        throw e;
      }
      this.observe(record);
      if (hits(this.fail, 'kill-after', type, data)) process.kill(process.pid, 'SIGKILL');
    });
    if (req.signal.aborted) this.abort.abort(req.signal.reason);
    else req.signal.addEventListener('abort', () => this.abort.abort(req.signal.reason), { once: true });
  }

  // Appends one event (secrets masked), durable before it resolves. A failed append
  // poisons the run: every attempt is torn down and the run ends with exit 5.
  readonly emit: Emit = async <T extends EventType>(type: T, data: EventMap[T]): Promise<void> => {
    if (this.journalError) throw new JournalFailure(this.journalError.message);
    await this.makeRoom();
    let record: JournalRecord;
    try {
      if (hits(this.fail, 'journal-error', type, data)) throw new Error(`fail point journal-error:${type}`);
      record = await this.writer.append(type, maskDeep(data, this.secrets) as unknown as Record<string, unknown>);
    } catch (e) {
      this.journalError = e instanceof Error ? e : new Error(String(e));
      this.abort.abort('journal_failed');
      throw new JournalFailure(this.journalError.message);
    }
    this.observe(record);
    if (hits(this.fail, 'kill-after', type, data)) process.kill(process.pid, 'SIGKILL');
  };

  // A write the file system refused: remember the first, stop the run (every attempt is
  // torn down through the abort signal, as for a journal failure).
  diskFailed(fault: DiskFault): void {
    this.diskFault ??= fault;
    if (!this.abort.signal.aborted) this.abort.abort('disk_full');
  }

  // After a disk failure, gives the run's reserve back before the next journal write, so
  // the records that close the attempts and the receipt fit on the file system that filled.
  async makeRoom(): Promise<void> {
    if (this.diskFault === undefined || this.roomMade) return;
    this.roomMade = true;
    await releaseReserve(this.run.dir);
  }

  // After exit 5: a note in the run dir saying the journal refused a write (and what it
  // said), so the coordinator that resumes journals journal-failed, not a crash. Best effort.
  async noteJournalFailure(): Promise<void> {
    await releaseReserve(this.run.dir);
    const e = this.journalError;
    const fault = diskFaultOf(e);
    const code = (e as { error?: { code?: unknown } } | undefined)?.error?.code;
    await writeJournalFailureNote(this.run.dir, {
      coordinator: this.me(),
      failedAt: new Date().toISOString(),
      reason: fault !== undefined ? diskReason(fault.errno) : null,
      errno: fault?.errno ?? (typeof code === 'string' ? code : null),
      path: fault?.path || this.run.journal,
      message: maskSecrets(e?.message ?? 'the journal refused a write', this.secrets),
    });
  }

  observe(record: JournalRecord): void {
    try {
      this.req.onRecord?.(record);
    } catch {
      // Observers never change outcomes.
    }
  }

  get workdirTemplate(): string {
    return this.plan.workdir ?? join(this.slug.work, '{{run.id}}.{{task.id}}.{{run.attempt}}');
  }

  context(): RunContext {
    return {
      plan: this.plan,
      runId: this.run.runId,
      startedAt: this.started,
      run: this.run,
      slug: this.slug,
      repo: this.repo,
      planDigest: this.planDigest,
      contractDigests: this.contracts,
      secrets: this.secrets,
      gitIdentity: this.identity,
      signal: this.abort.signal,
      emit: this.emit,
      diskFailed: (fault) => this.diskFailed(fault),
      integration: this.integration,
      checkpoints: this.checkpoints,
      workdirTemplate: this.workdirTemplate,
      roundsUsed: this.roundsUsed,
      worktrees: this.worktrees,
    };
  }
  identity: Record<string, string> = {};

  async drive(start: Start, identity: Promise<Record<string, string>> = identityEnv(this.repo)): Promise<RunEnd> {
    this.identity = await identity;
    this.attemptFloor = start.attemptFloor;
    if (start.mode !== 'clean') this.registeredTrees = await registeredWorktrees(this.repo);
    this.req.onStart?.({ runId: this.run.runId, journal: this.run.journal, slug: this.plan.slug, tasks: this.plan.tasks.map((t) => t.id) });
    try {
      if (start.mode === 'resume') {
        const stop = await this.takeOver(start.recovered);
        if (stop !== undefined) return stop;
      } else {
        // The journal holds only its header here: the never-started crash point.
        if (hits(this.fail, 'kill-after', HEADER_TYPE, {})) process.kill(process.pid, 'SIGKILL');
        await this.emit('run-started', {
          logicalRunId: this.run.runId,
          slug: this.plan.slug,
          planFile: this.plan.file,
          planCopy: this.run.planCopy,
          planDigest: this.planDigest,
          ...this.taskList(),
          repo: this.repo,
          stateDir: this.slug.stateRoot,
          base: this.plan.base,
          baseCommit: this.baseCommit,
          branch: this.integration.branchRef,
          jobs: this.jobs,
          land: this.plan.land ?? null,
          workdir: this.workdirTemplate,
          coordinator: this.me(),
          abandoned: start.abandoned,
          continues: start.mode === 'continue' ? start.origin : null,
          usageCarried: start.mode === 'continue' ? start.recovered.usage : ZERO_USAGE,
          costCarried: start.mode === 'continue' ? start.recovered.costUsd : 0,
        });
        if (start.mode === 'continue') await this.adopt(start.origin, start.recovered);
      }
      await this.operatorRetries();
      const branch = await this.resetBranch();
      if (branch !== undefined) return await this.failed(branch, null, []);
      const end = await this.schedule();
      return end;
    } catch (e) {
      if (e instanceof JournalFailure || this.journalError) return this.journalFailed();
      const message = maskSecrets(e instanceof Error ? e.message : String(e), this.secrets);
      const fault = diskFaultOf(e);
      if (fault !== undefined) this.diskFailed(fault);
      try {
        if (fault !== undefined) return await this.failed(diskFailure(fault, 'run'), null, []);
        return await this.failed({ class: 'engine', reason: 'internal_error', phase: 'run', message, evidenceTail: '' }, null, []);
      } catch {
        return this.journalFailed();
      }
    }
  }

  me(): ProcessIdentity {
    return processIdentity(process.pid) ?? { pid: process.pid, startTime: 0, bootId: 'unknown', host: 'unknown' };
  }

  // The task list as run-started and plan-amended journal it: its length and one digest of
  // every task's id, needs and contract digest (taskListDigest), so the record stays small
  // however many tasks the plan has (the tasks themselves are in the plan copy).
  taskList(): { taskCount: number; tasksDigest: string } {
    return { taskCount: this.plan.tasks.length, tasksDigest: taskListDigest(this.plan, this.contracts) };
  }

  // Loads what a journal proved: checkpoints (the tasks never dispatched again), attempt
  // numbers, usage so far, and the integration head.
  load(recovered: RecoveredRun): void {
    for (const cp of recovered.checkpoints) this.checkpoints.set(cp.taskId, cp.id);
    for (const [task, n] of recovered.attempts) this.attempts.set(task, n);
    this.attemptCount = recovered.attemptsTotal;
    for (const [task, trees] of recovered.trees) this.trees.set(task, [...trees]);
    this.integration.head = recovered.head;
    this.usage = recovered.usage;
    this.costUsd = recovered.costUsd;
    for (const [task, h] of recovered.histories) this.histories.set(task, h);
    for (const [task, f] of recovered.lastFailure) this.lastFailure.set(task, f);
    for (const [task, n] of recovered.roundsUsed) this.roundsUsed.set(task, n);
  }

  // `--retry TASK`: the operator states the cause changed; the task's history starts over.
  async operatorRetries(): Promise<void> {
    for (const taskId of this.req.retry ?? []) {
      this.histories.delete(taskId);
      await this.emit('operator-retry', { taskId });
    }
  }

  // Resume: record the crash, end the crashed attempts by their ownerTags (nothing else is
  // touched), close their records, journal a plan amendment, then carry on from the last
  // valid checkpoint. A task whose attempts keep dying with the coordinator ends as engine.
  // A coordinator that exited 5 (its note says the journal refused a write) did not crash:
  // that is journaled as journal-failed, and its attempts count towards no crash cap.
  async takeOver(recovered: RecoveredRun): Promise<RunEnd | undefined> {
    this.load(recovered);
    const note = await readJournalFailureNote(this.run.dir, recovered.coordinator);
    const crashed: Array<{ taskId: string; attempt: number; ownerTag: string; survivors: number[] }> = [];
    for (const a of recovered.open) {
      let survivors: number[] = [];
      try {
        survivors = (await teardownByTag(a.ownerTag, { graceMs: 2000 })).survivors;
      } catch {
        // Not a tag settle made: nothing of ours carries it.
      }
      crashed.push({ taskId: a.taskId, attempt: a.attempt, ownerTag: a.ownerTag, survivors });
    }
    // Whatever else the run left (an attempt whose attempt-started was torn, its landing's
    // git): every tag the run made starts with its prefix. No process of ours carries it yet.
    const strays = await endLeftovers(this.run.runId, [], 2000);
    const dead = recovered.coordinator;
    if (note !== undefined) {
      const { failedAt, reason, errno, path, message } = note;
      await this.emit('journal-failed', {
        previous: dead,
        coordinator: this.me(),
        failedAt,
        reason,
        errno,
        path,
        message,
        attempts: crashed,
        head: recovered.head,
        checkpoints: recovered.checkpoints.length,
      });
      await clearJournalFailureNote(this.run.dir);
    } else {
      await this.emit('coordinator-crashed', {
        previous: dead,
        coordinator: this.me(),
        crashed,
        head: recovered.head,
        checkpoints: recovered.checkpoints.length,
      });
    }
    // Usage an interrupted agent reported still counts: recount it from the saved transcript.
    for (const a of recovered.open) {
      const recount = await recountedUsage(a, this.plan.tasks.find((t) => t.id === a.taskId)?.format);
      if (recount === undefined) continue;
      this.usage = addUsage(this.usage, recount.usage);
      this.costUsd += recount.costUsd ?? 0;
      await this.emit('usage', recount);
    }
    let engine: { task: string | null; detail: string } | undefined;
    for (const a of crashed) {
      // Its checkpoint is durable: the attempt succeeded, and the crash came before its close.
      const own = recovered.checkpoints.find((cp) => cp.taskId === a.taskId && cp.attempt === a.attempt);
      if (own !== undefined) {
        await this.emit('attempt-closed', {
          taskId: a.taskId,
          attempt: a.attempt,
          outcome: 'success',
          reason: 'ok',
          class: null,
          phase: null,
          failure: null,
          checkpointId: own.id,
          evidence: [],
          survivors: a.survivors,
          durationMs: 0,
        });
        if (a.survivors.length > 0)
          engine ??= { task: a.taskId, detail: `processes of the crashed attempt survived teardown: ${a.survivors.join(' ')}` };
        continue;
      }
      const crashes = recovered.crashes.get(a.taskId) ?? 0;
      const decision = note !== undefined ? ({ action: 'retry' } as const) : decideAfterCrash({ ...emptyHistory(), crashes });
      const failure: AttemptFailureData =
        note !== undefined
          ? {
              class: 'environment',
              reason: 'journal_failed',
              phase: 'run',
              message: `the coordinator stopped during this attempt: the journal refused a write (${note.message})`,
              evidenceTail: '',
            }
          : {
              class: 'engine',
              reason: 'coordinator_crashed',
              phase: 'run',
              message: 'the coordinator died during this attempt',
              evidenceTail: '',
            };
      await this.emit('attempt-closed', {
        taskId: a.taskId,
        attempt: a.attempt,
        outcome: 'interrupted',
        reason: failure.reason,
        class: failure.class,
        phase: null,
        failure,
        checkpointId: null,
        evidence: [],
        survivors: a.survivors,
        durationMs: 0,
      });
      if (decision.action === 'stop' && !this.checkpoints.has(a.taskId)) engine ??= { task: a.taskId, detail: decision.detail };
      if (a.survivors.length > 0)
        engine ??= { task: a.taskId, detail: `processes of the crashed attempt survived teardown: ${a.survivors.join(' ')}` };
    }
    for (const taskId of this.checkpoints.keys()) await this.removeEarlierTrees(taskId);
    if (strays.survivors.length > 0)
      engine ??= { task: null, detail: `processes of the crashed run survived teardown: ${strays.survivors.join(' ')}` };
    if (recovered.planDigest !== this.planDigest) {
      await this.emit('plan-amended', { from: recovered.planDigest, to: this.planDigest, ...this.taskList(), jobs: this.jobs });
    }
    if (engine !== undefined) {
      const survived = engine.detail.startsWith('processes');
      return this.failed(failureOf(survived ? 'teardown_failed' : 'crash_cap_exhausted', 'run', engine.detail), engine.task, []);
    }
    return undefined;
  }

  // Continuation: adopt each still-valid checkpoint of the failed run (its task is not dispatched).
  async adopt(origin: string, recovered: RecoveredRun): Promise<void> {
    this.load(recovered);
    this.attempts.clear();
    this.attemptCount = 0;
    this.roundsUsed.clear();
    for (const cp of recovered.checkpoints) await this.emit('checkpoint-adopted', { origin, taskId: cp.taskId, checkpoint: cp });
    for (const taskId of this.checkpoints.keys()) await this.removeEarlierTrees(taskId);
  }

  // The number the next attempt of a task takes: past this run's and the slug history's
  // highest, and past any number whose attempt dir, evidence dir or worktree is on disk
  // although the journal does not record it (journaled as attempt-renumbered).
  async nextAttempt(taskId: string): Promise<number> {
    let n = Math.max(this.attempts.get(taskId) ?? 0, this.attemptFloor.get(taskId) ?? 0) + 1;
    const skipped: Array<{ attempt: number; found: string }> = [];
    for (let found = this.attemptOnDisk(taskId, n); found !== undefined; found = this.attemptOnDisk(taskId, n)) {
      skipped.push({ attempt: n, found });
      n += 1;
    }
    if (skipped.length > 0) await this.emit('attempt-renumbered', { taskId, attempt: n, skipped });
    return n;
  }

  // What on disk already belongs to attempt `n` of a task (a path), or undefined.
  attemptOnDisk(taskId: string, n: number): string | undefined {
    const evidence = attemptEvidenceDir(this.run, taskId, n);
    if (existsSync(evidence)) return evidence;
    const dir = render(this.workdirTemplate, workdirVars(this, { id: taskId }, n), 'workdir');
    if (!dir.ok) return undefined;
    if (existsSync(dir.value)) return dir.value;
    const tree = join(dir.value, 'tree');
    return this.registeredTrees.has(tree) ? tree : undefined;
  }

  // Once a task is checkpointed its earlier attempts' worktrees go (`git worktree remove`,
  // then prune); their evidence stays in the state dir, their attempt dirs until `retain`.
  async removeEarlierTrees(taskId: string): Promise<void> {
    const trees = this.trees.get(taskId);
    this.trees.delete(taskId);
    if (trees === undefined || trees.length === 0) return;
    const removed: string[] = [];
    await this.worktrees.exclusive(async () => {
      for (const { worktree } of trees) {
        if (!existsSync(worktree) && !this.registeredTrees.has(worktree)) continue;
        await git(this.repo, ['worktree', 'remove', '--force', '--end-of-options', worktree]);
        removed.push(worktree);
      }
      if (removed.length > 0) await git(this.repo, ['worktree', 'prune']);
    });
    if (removed.length > 0) await this.emit('worktrees-removed', { taskId, worktrees: removed });
  }

  get jobs(): number {
    return Math.max(1, this.req.jobs ?? this.plan.jobs);
  }

  // Points the integration branch at the integration head — the base commit, or the last
  // valid checkpoint's result on a resume: the branch is a projection of the journal.
  async resetBranch(): Promise<AttemptFailureData | undefined> {
    const ref = this.integration.branchRef;
    const head = this.integration.head;
    const old = (await readRef(this.repo, ref)) ?? null;
    if (old !== head) {
      const moved = await updateRef(this.repo, ref, head, old);
      const fault = moved.ok ? undefined : diskFaultInText(moved.error.message, this.repo);
      if (fault !== undefined) {
        this.diskFailed(fault);
        return diskFailure(fault, 'run');
      }
      if (!moved.ok)
        return {
          class: 'integration',
          reason: 'branch_moved',
          phase: 'run',
          message: `${ref} moved while starting: ${moved.error.message}`,
          evidenceTail: '',
        };
    }
    await this.emit('branch-updated', { taskId: null, attempt: null, branch: ref, from: old, to: head });
    return undefined;
  }

  // Runs an attempt and turns anything it throws into a value the scheduler can read.
  async dispatch(task: TaskSpec, attempt: number): Promise<Settled> {
    try {
      const previous = this.lastFailure.get(task.id);
      return { kind: 'attempt', taskId: task.id, result: await runAttempt(this.context(), task, attempt, previous) };
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      if (e instanceof JournalFailure || this.journalError) return { kind: 'journal', taskId: task.id, error };
      throw error;
    }
  }

  // After a failed attempt: fingerprint it, ask repair.ts, journal the decision (before any
  // re-dispatch, so counts survive a crash). Returns the delay of a retry, or the run's failure.
  async repair(task: TaskSpec, r: Extract<AttemptResult, { ok: false }>): Promise<{ retryInMs: number } | { stop: AttemptFailureData }> {
    const f = r.failure;
    const contractDigest = this.contracts.get(task.id) ?? '';
    const fingerprint = failureFingerprint({ ...f, baseCommit: r.baseCommit, contractDigest }, r.ownPaths);
    const history = this.histories.get(task.id) ?? emptyHistory();
    const decision = decideRepair({ ...f, fingerprint }, history, task.repair);
    this.histories.set(task.id, recordFailure(history, { class: f.class, fingerprint }));
    await this.emit('repair-decided', {
      taskId: task.id,
      attempt: r.attempt,
      class: f.class,
      reason: f.reason,
      fingerprint,
      action: decision.action,
      changed: decision.action === 'retry' ? decision.changed : null,
      delayMs: decision.action === 'retry' ? decision.delayMs : 0,
      stopReason: decision.action === 'stop' ? decision.reason : null,
      detail: decision.action === 'stop' ? decision.detail : null,
    });
    if (decision.action === 'retry') {
      this.lastFailure.set(task.id, { attempt: r.attempt, failure: f });
      return { retryInMs: decision.delayMs };
    }
    // A repeat is its own reason (the run stopped because nothing changed); an exhausted
    // cap or a class never retried keeps the failure's reason, the detail says which.
    const message = decision.reason === 'not_retryable' ? f.message : `${f.message} (${decision.detail})`;
    return { stop: decision.reason === 'repeated_failure' ? { ...f, reason: 'repeated_failure', message } : { ...f, message } };
  }

  // DAG dispatch up to `jobs` at once, in plan order among ready tasks. A failed attempt is
  // retried when repair says so (after its delay); the first failure that stops stops new
  // dispatches; attempts in flight finish (their checkpoints stay valid).
  async schedule(): Promise<RunEnd> {
    const order = topologicalOrder(this.plan);
    const byId = new Map(this.plan.tasks.map((t) => [t.id, t]));
    const waiting = new Set(order.filter((id) => !this.checkpoints.has(id)));
    const notBefore = new Map<string, number>();
    const inFlight = new Map<string, Promise<Settled>>();
    let failure: { failure: AttemptFailureData; task: string | null; evidence: string[] } | undefined;
    let survivors: { task: string; pids: number[] } | undefined;
    for (;;) {
      if (failure === undefined && !this.abort.signal.aborted) {
        const spent = budgetExceeded(this.plan.budget, { usage: this.usage, costUsd: this.costUsd });
        if (spent !== undefined && waiting.size > 0) {
          failure = {
            failure: {
              class: 'budget',
              reason: spent.reason,
              phase: 'run',
              message: `the budget is spent: ${spent.detail}`,
              evidenceTail: '',
            },
            task: null,
            evidence: [],
          };
        }
      }
      let nextWake: number | undefined;
      if (failure === undefined && !this.abort.signal.aborted) {
        for (const id of order) {
          if (inFlight.size >= this.jobs) break;
          const task = byId.get(id)!;
          if (!waiting.has(id) || !task.needs.every((n) => this.checkpoints.has(n))) continue;
          const at = notBefore.get(id) ?? 0;
          if (at > Date.now()) {
            nextWake = Math.min(nextWake ?? at, at);
            continue;
          }
          waiting.delete(id);
          const attempt = await this.nextAttempt(id);
          this.attempts.set(id, attempt);
          this.attemptCount += 1;
          inFlight.set(id, this.dispatch(task, attempt));
        }
      }
      if (inFlight.size === 0 && nextWake === undefined) break;
      const racers: Array<Promise<Settled | undefined>> = [...inFlight.values()];
      if (nextWake !== undefined) racers.push(wake(nextWake - Date.now(), this.abort.signal));
      const settled = await Promise.race(racers);
      if (settled === undefined) continue;
      inFlight.delete(settled.taskId);
      if (settled.kind === 'journal') continue;
      const r = settled.result;
      this.usage = addUsage(this.usage, r.usage);
      this.costUsd += r.costUsd;
      if (r.ok) {
        this.checkpoints.set(r.taskId, r.checkpoint.id);
        this.lastFailure.delete(r.taskId);
        await this.removeEarlierTrees(r.taskId);
        await this.retain(r.taskId, r.attempt, [...inFlight.keys()]);
        if (r.survivors.length > 0) survivors ??= { task: r.taskId, pids: r.survivors };
        continue;
      }
      // A disk failure stops the run and uses up no repair allowance: no repair-decided.
      if (isDiskReason(r.failure.reason) && r.failure.detail !== undefined) {
        if (failure === undefined || !isDiskReason(failure.failure.reason))
          failure = { failure: r.failure, task: r.taskId, evidence: r.evidence };
        continue;
      }
      if (r.failure.class === 'interrupted' || this.abort.signal.aborted) {
        failure ??= { failure: r.failure, task: r.taskId, evidence: r.evidence };
        continue;
      }
      const decided = await this.repair(byId.get(r.taskId)!, r);
      if ('retryInMs' in decided && failure === undefined) {
        waiting.add(r.taskId);
        notBefore.set(r.taskId, Date.now() + decided.retryInMs);
      } else if ('stop' in decided && (failure === undefined || failure.failure.class === 'interrupted')) {
        failure = { failure: decided.stop, task: r.taskId, evidence: r.evidence };
      }
    }
    if (this.journalError) return this.journalFailed();
    if (this.diskFault !== undefined) {
      const disk =
        failure !== undefined && isDiskReason(failure.failure.reason)
          ? failure
          : { failure: diskFailure(this.diskFault, 'run'), task: null, evidence: [] };
      return this.failed(disk.failure, disk.task, disk.evidence);
    }
    if (this.req.signal.aborted) {
      const f = failure?.failure;
      return this.failed(
        {
          class: 'interrupted',
          reason: 'interrupted',
          phase: f?.phase ?? 'run',
          message: `interrupted by ${String(this.req.signal.reason)}`,
          evidenceTail: '',
        },
        failure?.task ?? null,
        failure?.evidence ?? [],
      );
    }
    if (failure !== undefined) return this.failed(failure.failure, failure.task, failure.evidence);
    if (waiting.size > 0) {
      return this.failed(
        {
          class: 'engine',
          reason: 'unschedulable',
          phase: 'run',
          message: `tasks never became ready: ${[...waiting].join(', ')}`,
          evidenceTail: '',
        },
        null,
        [],
      );
    }
    if (survivors !== undefined) {
      return this.failed(
        {
          class: 'teardown',
          reason: 'teardown_failed',
          phase: 'command',
          message: `task ${survivors.task} is checkpointed but its processes survived teardown: ${survivors.pids.join(' ')}`,
          evidenceTail: '',
        },
        survivors.task,
        [],
      );
    }
    let landed: string | null = null;
    if (this.plan.land !== undefined) {
      const result = await land(this.repo, this.plan.land, this.integration.head, this.emit, {
        ownerTag: newRunOwnerTag(this.run.runId),
        signal: this.abort.signal,
        env: this.identity,
      });
      const fault = result.ok ? undefined : diskFaultInText(result.failure.message, this.repo);
      if (fault !== undefined) this.diskFailed(fault);
      if (!result.ok) return this.failed(fault !== undefined ? diskFailure(fault, 'land') : result.failure, null, []);
      landed = result.branch;
    }
    return this.complete(landed);
  }

  // `retain = N`: prunes finished attempt dirs beyond the newest N through workdir's safe
  // pruning (marked, template-shaped, never in flight), then forgets their git worktrees.
  async retain(taskId: string, attempt: number, inFlightTasks: string[]): Promise<void> {
    if (this.plan.retain === undefined) return;
    const vars = workdirVars(this, { id: taskId }, attempt);
    const inFlight: string[] = [];
    for (const id of inFlightTasks) {
      const dir = render(this.workdirTemplate, workdirVars(this, { id }, this.attempts.get(id) ?? 1), 'workdir');
      if (dir.ok) inFlight.push(dir.value);
    }
    const pruned = await prune(this.workdirTemplate, vars, { retain: this.plan.retain, inFlight });
    if (pruned.ok) await this.worktrees.exclusive(() => git(this.repo, ['worktree', 'prune']));
  }

  get runId(): string {
    return this.run.runId;
  }

  get startedAt(): Date {
    return this.started;
  }

  totalAttempts(): number {
    return this.attemptCount;
  }

  async complete(landed: string | null): Promise<RunEnd> {
    const receipt: RunCompleteData = {
      logicalRunId: this.run.runId,
      branch: this.integration.branchRef,
      resultCommit: this.integration.head,
      landed,
      tasks: this.checkpoints.size,
      attempts: this.totalAttempts(),
      usage: this.usage,
      costUsd: shownCost(this.costUsd),
      durationMs: Date.now() - this.started.getTime(),
    };
    try {
      await this.receipt.complete(receipt);
    } catch {
      return this.journalFailed();
    }
    return { kind: 'complete', receipt, journal: this.run.journal };
  }

  async failed(f: AttemptFailureData, task: string | null, evidence: string[]): Promise<RunEnd> {
    const reason = this.req.signal.reason;
    const receipt: RunFailedData = {
      logicalRunId: this.run.runId,
      class: f.class,
      reason: f.reason,
      message: maskSecrets(f.message, this.secrets),
      task,
      phase: f.phase,
      evidence,
      signal: f.class === 'interrupted' && typeof reason === 'string' ? reason : null,
      ...(f.detail !== undefined ? { detail: f.detail } : {}),
      tasksDone: this.checkpoints.size,
      attempts: this.totalAttempts(),
      usage: this.usage,
      costUsd: shownCost(this.costUsd),
      durationMs: Date.now() - this.started.getTime(),
    };
    try {
      await this.receipt.failed(receipt);
    } catch {
      return this.journalFailed();
    }
    return { kind: 'failed', receipt, journal: this.run.journal };
  }

  journalFailed(): RunEnd {
    const message = this.journalError?.message ?? 'the journal refused a write';
    return {
      kind: 'journal_failed',
      message: `${message} (${relative(process.cwd(), this.run.journal) || this.run.journal})`,
      journal: this.run.journal,
    };
  }
}
