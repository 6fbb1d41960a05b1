import type { ProcessIdentity } from '@runplan/settle';
import type { Plan } from '../plan/types.js';
import { taskContractDigests } from '../plan/digest.js';
import type { TaskHistory } from '../repair/index.js';
import type { AttemptFailureData, CheckpointData, DurableRound, RunStartedData, UsageTotals } from '../events/types.js';
import type { OpenAttempt, RunView, StoppedTask } from '../events/view.js';
import { checkpointId } from '../attempt/integrate.js';
import { ancestryOracle, isAncestor, missingObjects, type AncestryOracle } from '../host/git.js';
import { checkpointProblem } from './checkpoint-check.js';
import type { PriorRun } from './inspect.js';
import type { Refusal, RefusalReason } from './refusal.js';

/**
 * What a resume or a continuation takes over from an earlier run: its journal's RunView
 * plus the checkpoints that are still valid against the plan and git. A resume refuses on
 * any doubt (the caller exits 3 having written nothing); a continuation adopts the longest
 * valid prefix of the checkpoint chain (see checkpointProblem for what valid means).
 */
export interface RecoveredRun {
  /** The journal's fold itself: the coordinator goes on folding its own records into it (RunFold); the fields below are copies. */
  view: RunView;
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
  /** The last durable loop round of attempts a coordinator crash ended, per task. */
  durableRounds: Map<string, DurableRound>;
  /**
   * Tasks repair stopped (and no operator-retry since): never redispatched on the same
   * inputs. `contractDigest` is the contract the stopped attempt ran under (its
   * attempt-started record); null when that record did not say.
   */
  stopped: Map<string, StoppedTask>;
}

export interface RecoverOptions {
  plan: Plan;
  repo: string;
  /** `resume`: every doubt is a refusal. `continue`: the valid prefix. */
  mode: 'resume' | 'continue';
  /** The plan's task contract digests, when the caller has them already. */
  digests?: Map<string, string>;
}

// Recovers a run's state from its journal's view and git (see RecoverOptions.mode).
export async function recoverRun(
  prior: PriorRun,
  { plan, repo, mode, digests = taskContractDigests(plan) }: RecoverOptions,
): Promise<{ ok: true; value: RecoveredRun } | { ok: false; error: Refusal }> {
  const id = prior.paths.runId;
  const fresh = `runplan run ${plan.file} --fresh`;
  const refuse = (reason: RefusalReason, message: string, hint = fresh) => ({ ok: false as const, error: { reason, message, hint } });
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
  if (fold.malformed !== undefined) {
    const m = fold.malformed;
    return refuse(
      'run_unreadable',
      `run ${id}: the attempt-started record at seq ${m.seq} has ${m.field} ${JSON.stringify(m.value) ?? 'missing'}, not a ${m.field === 'taskId' ? 'task id' : 'positive integer'}: ${prior.paths.journal}`,
    );
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
  const asked = missingObjects(repo, shas);
  // Every checkpoint's id recomputed while git answers (the CPU part of the checks; the
  // loop below still meets each problem in the order checkpointProblem looks for them),
  // a slice at a time, so the event loop goes on feeding git its stdin and reading it.
  const recomputed = new Map<CheckpointData, string>();
  for (let i = 0; i < all.length; i++) {
    recomputed.set(all[i]!, checkpointId(all[i]!));
    if (i % 512 === 511) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const missing = new Set(await asked);
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
    const problem = await checkpointProblem(cp, { plan, byTask, digests, ids, head, missing, descends, recomputed });
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
      // Copies: the view goes on folding the run's new records (RunFold) while these are read.
      view: fold,
      stopped: new Map(fold.stopped),
      durableRounds: fold.durableRounds(),
      started,
      checkpoints: valid,
      head,
      attempts: new Map(fold.attempts),
      trees: new Map(fold.trees),
      open: [...fold.open.values()],
      crashes: new Map(fold.crashes),
      planDigest: fold.planDigest,
      coordinator: fold.coordinator,
      usage: fold.usage,
      costUsd: fold.costUsd,
      attemptsTotal: fold.attemptsTotal,
      histories: new Map(fold.histories),
      lastFailure: new Map(fold.lastFailure),
    },
  };
}
