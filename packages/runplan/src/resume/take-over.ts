import { teardownByTag } from '@runplan/settle';
import { failureOf } from '../events/failure.js';
import { coordinatorIdentity } from '../coordinator/identity.js';
import type { RunParts } from '../coordinator/parts.js';
import type { StopCause } from '../coordinator/types.js';
import { removeEarlierTrees } from '../coordinator/worktrees.js';
import type { AttemptFailureData, CheckpointData } from '../events/types.js';
import { clearJournalFailureNote, readJournalFailureNote } from '../host/disk-reserve.js';
import { decideAfterCrash, emptyHistory } from '../repair/index.js';
import { planUsesSlurm } from '../executor/spec.js';
import { endLeftovers, journaledCgroupParents } from './leftovers.js';
import { cancelRunJobs, mayHaveJobs } from './slurm-jobs.js';
import type { RecoveredRun } from './recover.js';
import { recountedUsage } from './recount.js';

/** An attempt the dead coordinator left open, once its processes were ended by its ownerTag. */
interface Crashed {
  taskId: string;
  attempt: number;
  ownerTag: string;
  survivors: number[];
}

/** Why the take-over ends the run: the task (null for the run) and what happened. */
/** Why a take-over ends the run: processes survived their teardown, or crashes used up the cap. */
type Engine = { task: string | null; detail: string; reason: 'teardown_failed' | 'crash_cap_exhausted' };

/** The journal-failed note the coordinator that exited 5 left (undefined after a crash). */
type Note = Awaited<ReturnType<typeof readJournalFailureNote>>;

// Resume: record the crash, end the crashed attempts by their ownerTags (nothing else is
// touched), close their records, journal a plan amendment, then carry on from the last
// valid checkpoint. A task whose attempts keep dying with the coordinator ends as engine.
// A coordinator that exited 5 (its note says the journal refused a write) did not crash:
// that is journaled as journal-failed, and its attempts count towards no crash cap.
// Returns why the run stops now, if it does (the caller writes the receipt).
export async function takeOver(
  parts: RunParts,
  recovered: RecoveredRun,
  adopting?: { origin: string; checkpoints: CheckpointData[] },
): Promise<StopCause | undefined> {
  const { ctx, ledger } = parts;
  ledger.load(recovered);
  ctx.integration.head = recovered.head;
  const note = await readJournalFailureNote(ctx.run.dir, recovered.coordinator);
  // Its Slurm jobs first, by the run's prefix (their names): the engine ends what runs on
  // the nodes; only srun, the local client, is left to the process sweep below.
  const jobs = mayHaveJobs(recovered.open, planUsesSlurm(ctx.plan)) ? await cancelRunJobs(ctx.runId, 2000) : undefined;
  const crashed: Crashed[] = [];
  for (const a of recovered.open) {
    let survivors: number[] = [];
    try {
      // Its cgroups are where its attempt-started said, whatever our own cgroup is.
      const cgroupParents = a.cgroupParent !== null ? [a.cgroupParent] : [];
      survivors = (await teardownByTag(a.ownerTag, { graceMs: 2000, cgroupParents })).survivors;
    } catch {
      // Not a tag settle made: nothing of ours carries it.
    }
    crashed.push({ taskId: a.taskId, attempt: a.attempt, ownerTag: a.ownerTag, survivors });
  }
  // Whatever else the run left (an attempt whose attempt-started was torn, its landing's
  // git): every tag the run made starts with its prefix. No process of ours carries it yet.
  const cgroupParents = [
    ...journaledCgroupParents(recovered.open),
    ...(ctx.plan.cgroupParent !== undefined ? [ctx.plan.cgroupParent] : []),
  ];
  const strays = await endLeftovers(ctx.runId, [], 2000, { cgroupParents });
  const dead = recovered.coordinator;
  if (jobs !== undefined) await ctx.emit('jobs-cancelled', jobs);
  if (note !== undefined) {
    const { failedAt, reason, errno, path, message } = note;
    await ctx.emit('journal-failed', {
      previous: dead,
      coordinator: coordinatorIdentity(),
      failedAt,
      reason,
      errno,
      path,
      message,
      attempts: crashed,
      head: recovered.head,
      checkpoints: recovered.checkpoints.length,
    });
    await clearJournalFailureNote(ctx.run.dir);
  } else {
    await ctx.emit('coordinator-crashed', {
      previous: dead,
      coordinator: coordinatorIdentity(),
      crashed,
      head: recovered.head,
      checkpoints: recovered.checkpoints.length,
    });
  }
  // Usage an interrupted agent reported still counts: recount it from the saved transcript.
  for (const a of recovered.open) {
    for (const recount of await recountedUsage(a, ctx.plan.tasks.find((t) => t.id === a.taskId)?.format, ledger.threadTotals)) {
      ledger.spent(recount.usage, recount.costUsd ?? 0);
      await ctx.emit('usage', recount);
    }
  }
  let engine: Engine | undefined;
  for (const a of crashed) {
    const stop = await closeCrashed(parts, { a, recovered, note });
    engine ??= stop;
  }
  // A continuation's adoptions its dead coordinator did not journal (resume-start.ts).
  for (const cp of adopting?.checkpoints ?? [])
    await ctx.emit('checkpoint-adopted', { origin: adopting!.origin, taskId: cp.taskId, checkpoint: cp });
  for (const taskId of ledger.checkpoints.keys()) await removeEarlierTrees(parts, taskId);
  if (jobs !== undefined && jobs.survivors.length > 0)
    engine ??= {
      task: null,
      detail: `Slurm jobs of the crashed run survived scancel: ${jobs.survivors.join(' ')}`,
      reason: 'teardown_failed',
    };
  if (strays.survivors.length > 0)
    engine ??= {
      task: null,
      detail: `processes of the crashed run survived teardown: ${strays.survivors.join(' ')}`,
      reason: 'teardown_failed',
    };
  if (recovered.planDigest !== ctx.planDigest) {
    await ctx.emit('plan-amended', { from: recovered.planDigest, to: ctx.planDigest, ...parts.tasks, jobs: parts.jobs });
  }
  if (engine === undefined) return undefined;
  return {
    failure: failureOf(engine.reason, 'run', engine.detail),
    task: engine.task,
    evidence: [],
  };
}

// Closes one crashed attempt's record: a success when its checkpoint is durable (the crash
// came before its close), else interrupted by the crash (or by the journal failure). Returns
// why the run must stop on its account: its crash cap is spent, or its processes survived.
async function closeCrashed(parts: RunParts, at: { a: Crashed; recovered: RecoveredRun; note: Note }): Promise<Engine | undefined> {
  const { a, recovered, note } = at;
  const survived = a.survivors.length > 0 ? `processes of the crashed attempt survived teardown: ${a.survivors.join(' ')}` : undefined;
  const own = recovered.checkpoints.find((cp) => cp.taskId === a.taskId && cp.attempt === a.attempt);
  if (own !== undefined) {
    await parts.ctx.emit('attempt-closed', {
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
    return survived !== undefined ? { task: a.taskId, detail: survived, reason: 'teardown_failed' } : undefined;
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
  await parts.ctx.emit('attempt-closed', {
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
  if (decision.action === 'stop' && !parts.ledger.checkpoints.has(a.taskId))
    return { task: a.taskId, detail: decision.detail, reason: 'crash_cap_exhausted' };
  return survived !== undefined ? { task: a.taskId, detail: survived, reason: 'teardown_failed' } : undefined;
}
