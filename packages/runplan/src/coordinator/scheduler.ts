import { sleepFor } from '@runplan/common';
import type { AttemptResult } from '../attempt/run-attempt.js';
import { isDiskReason } from '../host/disk.js';
import { topologicalOrder } from '../plan/load.js';
import type { Plan, TaskSpec } from '../plan/types.js';
import { budgetExceeded } from '../repair/index.js';
import type { AfterFailure, FailedAttempt } from './after-failure.js';
import type { RunLedger } from './ledger.js';
import type { StopCause } from './types.js';
import type { FailureClass } from '../events/reasons.js';
import type { NotDispatchedTask } from '../events/types.js';
import { notDispatched } from './not-dispatched.js';

/** How one dispatched attempt came back: its result, or the journal failure it threw. */
export type Settled = { kind: 'attempt'; taskId: string; result: AttemptResult } | { kind: 'journal'; taskId: string; error: Error };

/** Why dispatching stopped; the coordinator turns it into the receipt (the scheduler writes none). */
export interface ScheduleEnd {
  /** The failure that stopped new dispatches, if one did (see the precedence in `schedule`). */
  failure: StopCause | undefined;
  /** Tasks that never reached a checkpoint (plan order; a task queued for a retry comes last). */
  waiting: string[];
  /** The first checkpointed task whose processes survived teardown. */
  survivors: { task: string; pids: number[] } | undefined;
  /** Under keep-going: the tasks that stopped for good while the others went on, in that order. */
  keptGoing: StopCause[];
  /** Under keep-going: the waiting tasks downstream of a stop in keptGoing, with the stop they wait on. */
  notDispatched: NotDispatchedTask[];
}

/** What the DAG loop needs: the plan, the ledger it reads and updates, and the steps around an attempt. */
export interface ScheduleDeps {
  plan: Pick<Plan, 'tasks' | 'budget'>;
  ledger: RunLedger;
  jobs: number;
  /** `--keep-going` / `keep_going`: a task's stop (other than KEEP_GOING_STOPS_ALL) stops only its dependents. */
  keepGoing?: boolean;
  /** The run's abort: once aborted nothing new is dispatched and delayed retries wake at once. */
  signal: AbortSignal;
  /** The number the task's next attempt takes (may journal attempt-renumbered). */
  nextAttempt(taskId: string): Promise<number>;
  /** Runs one attempt; never rejects with a journal failure (that is a `journal` Settled). */
  dispatch(task: TaskSpec, attempt: number): Promise<Settled>;
  /** After a checkpoint: clean up the task's earlier trees, prune by `retain` (inFlight: tasks still running). */
  afterSuccess(taskId: string, attempt: number, inFlight: string[]): Promise<void>;
  /** After a failed attempt that repair judges: retry after a delay, or stop the run. */
  afterFailure(task: TaskSpec, r: FailedAttempt): Promise<AfterFailure>;
}

/** Classes that stop all dispatch even under keep-going: the run itself, not one task, is in doubt. */
export const KEEP_GOING_STOPS_ALL: readonly FailureClass[] = ['budget', 'teardown', 'invariant', 'engine', 'interrupted'];

// Resolves undefined after `ms`, however long (a provider's reset may be days away), or at
// once when the run is aborted (the scheduler then looks again and stops dispatching): a
// delayed retry's turn.
async function wake(ms: number, signal: AbortSignal): Promise<undefined> {
  await sleepFor(Math.max(0, ms), signal);
  return undefined;
}

// DAG dispatch up to `jobs` at once, in plan order among ready tasks. A failed attempt is
// retried when repair says so (after its delay); the first failure that stops stops new
// dispatches (under keep-going only a class of KEEP_GOING_STOPS_ALL does; another task's
// stop leaves its dependents waiting); attempts in flight finish (their checkpoints stay valid). Which failure is the
// run's: a disk failure over any other; else a repair stop over an interruption; else the first.
export async function schedule(deps: ScheduleDeps): Promise<ScheduleEnd> {
  const { plan, ledger, signal } = deps;
  const order = topologicalOrder(plan);
  const byId = new Map(plan.tasks.map((t) => [t.id, t]));
  const waiting = new Set(order.filter((id) => !ledger.checkpoints.has(id)));
  const notBefore = new Map<string, number>();
  const inFlight = new Map<string, Promise<Settled>>();
  let failure: StopCause | undefined;
  let survivors: { task: string; pids: number[] } | undefined;
  const keptGoing: StopCause[] = [];
  for (;;) {
    if (failure === undefined && !signal.aborted) {
      const spent = budgetExceeded(plan.budget, { usage: ledger.usage, costUsd: ledger.costUsd });
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
    if (failure === undefined && !signal.aborted) {
      for (const id of order) {
        if (inFlight.size >= deps.jobs) break;
        const task = byId.get(id)!;
        if (!waiting.has(id) || !task.needs.every((n) => ledger.checkpoints.has(n))) continue;
        const at = notBefore.get(id) ?? 0;
        if (at > Date.now()) {
          nextWake = Math.min(nextWake ?? at, at);
          continue;
        }
        waiting.delete(id);
        const attempt = await deps.nextAttempt(id);
        ledger.dispatched(id, attempt);
        inFlight.set(id, deps.dispatch(task, attempt));
      }
    }
    if (inFlight.size === 0 && nextWake === undefined) break;
    const racers: Array<Promise<Settled | undefined>> = [...inFlight.values()];
    if (nextWake !== undefined) racers.push(wake(nextWake - Date.now(), signal));
    const settled = await Promise.race(racers);
    if (settled === undefined) continue;
    inFlight.delete(settled.taskId);
    if (settled.kind === 'journal') continue;
    const r = settled.result;
    ledger.settled(r);
    if (r.ok) {
      await deps.afterSuccess(r.taskId, r.attempt, [...inFlight.keys()]);
      if (r.survivors.length > 0) survivors ??= { task: r.taskId, pids: r.survivors };
      continue;
    }
    // A disk failure stops the run and uses up no repair allowance: no repair-decided.
    if (isDiskReason(r.failure.reason) && r.failure.detail !== undefined) {
      if (failure === undefined || !isDiskReason(failure.failure.reason))
        failure = { failure: r.failure, task: r.taskId, evidence: r.evidence };
      continue;
    }
    if (r.failure.class === 'interrupted' || signal.aborted) {
      failure ??= { failure: r.failure, task: r.taskId, evidence: r.evidence };
      continue;
    }
    const decided = await deps.afterFailure(byId.get(r.taskId)!, r);
    if ('retryInMs' in decided && failure === undefined) {
      waiting.add(r.taskId);
      notBefore.set(r.taskId, decided.retryAtMs ?? Date.now() + decided.retryInMs);
    } else if ('stop' in decided) {
      const stop = { failure: decided.stop, task: r.taskId, evidence: r.evidence };
      // Its dependents stay waiting (never ready); everything else goes on.
      if (deps.keepGoing && failure === undefined && !KEEP_GOING_STOPS_ALL.includes(decided.stop.class)) keptGoing.push(stop);
      else if (failure === undefined || failure.failure.class === 'interrupted') failure = stop;
    }
  }
  const left = notDispatched(
    plan.tasks,
    [...waiting],
    keptGoing.map((s) => s.task!),
  );
  return { failure, waiting: [...waiting], survivors, keptGoing, notDispatched: left };
}
