import { taskContractDigests } from '../plan/digest.js';
import { topologicalOrder } from '../plan/load.js';
import type { Plan } from '../plan/types.js';
import { chooseRun, type Start } from '../resume/choose.js';
import { readRun } from '../resume/inspect.js';
import type { Refusal } from '../resume/refusal.js';
import { shownCost, totalTokensOf } from '../events/types.js';
import { newRunId, slugPaths, stateRootFor } from '../host/state.js';
import { liveCoordinator, isStopHolder } from '../observe/status.js';
import { missingPrograms } from './command-check.js';
import { landPrecheck } from './land-check.js';
import { locate } from './locate.js';
import { stateDirRefusal } from './run-plan.js';
import { creatableError } from '../host/dir-check.js';
import type { RunEnd, RunRequest } from './types.js';

/**
 * One thing the next `runplan run` would do, as `run --dry-run` says it (one line, or one
 * JSON line with `--json`): how it starts (a new run, a resume, a continuation, or up to
 * date), the runs it would close on the way, the slug's budget, the land pre-check, then one
 * step per task in plan order — skip (checkpointed in the run it resumes, or up to date),
 * adopt (a continuation's still-valid checkpoint) or dispatch (naming the programs of the
 * task its attempt would not find) — or the refusal `run` would exit 3 with.
 */
export type DryStep =
  | { action: 'new_run'; base: string; baseCommit: string }
  | { action: 'resume'; run: string; baseCommit: string }
  | { action: 'continue'; run: string; baseCommit: string }
  | { action: 'up_to_date'; run: string; resultCommit: string }
  | { action: 'abandon'; run: string }
  | { action: 'notice'; line: string }
  | { action: 'budget'; tokens: number; costUsd: number; maxTokens: number | null; maxCostUsd: number | null }
  | { action: 'land'; branch: string; check: 'ok' }
  | { action: 'skip'; task: string; checkpoint: string; run: string }
  | { action: 'adopt'; task: string; checkpoint: string; run: string }
  | {
      action: 'dispatch';
      task: string;
      attempt: number;
      fromRound?: { attempt: number; round: number; ref: string };
      /** Programs of the task its attempt would not find (command-check.ts): it would fail spawn_failed. */
      notFound?: string[];
    }
  | ({ action: 'refuse' } & Refusal);

/** How `run --dry-run` ended: what the next run would do, or why it could not even be asked (invalid plan, a live holder). */
export type DryRunEnd = { kind: 'dry_run'; steps: DryStep[] } | Extract<RunEnd, { kind: 'invalid_plan' | 'refused' | 'locked' }>;

// `runplan run PLAN --dry-run`: what `run` would decide, read-only — no lock taken (a live
// holder is seen as status sees it), nothing created, closed, torn down or written.
export async function dryRun(req: Omit<RunRequest, 'signal'>): Promise<DryRunEnd> {
  const located = await locate(req);
  if ('kind' in located) return located as DryRunEnd;
  const { plan, repo, common, baseCommit } = located;
  const slug = slugPaths(stateRootFor(common, req.stateDir), plan.slug);
  // `run` creates the slug's state dir before anything else and refuses when it cannot.
  const uncreatable = await creatableError(slug.dir);
  if (uncreatable !== undefined) {
    const { kind: _, ...refusal } = stateDirRefusal(uncreatable, slug.dir);
    return { kind: 'dry_run', steps: [{ action: 'refuse', ...refusal }] };
  }
  const live = await liveCoordinator(slug);
  if (live !== undefined) {
    const doing = isStopHolder(live) ? 'being stopped by `runplan stop`,' : 'being run by';
    return {
      kind: 'locked',
      holder: live,
      slug: plan.slug,
      message: `slug ${plan.slug} is ${doing} pid ${live.pid} (start time ${live.startTime}, since ${live.acquiredAt}): ${slug.dir}`,
    };
  }
  const digests = taskContractDigests(plan);
  const request = { ...req, signal: new AbortController().signal };
  const chosen = await chooseRun({ slug, plan, repo, req: request, runId: newRunId(), baseCommit, digests, readOnly: true });
  if (!chosen.ok) {
    const end = chosen.end;
    if (end.kind === 'up_to_date') {
      const closing = (chosen.abandoned ?? []).map((run): DryStep => ({ action: 'abandon', run }));
      const [upToDate, ...skips] = await upToDateSteps(plan, end);
      return { kind: 'dry_run', steps: [upToDate!, ...closing, ...skips] };
    }
    if (end.kind === 'refused') return { kind: 'dry_run', steps: [{ action: 'refuse', ...end }] };
    return end as DryRunEnd;
  }
  const start = chosen.value;
  const steps: DryStep[] = [startStep(plan, start, baseCommit)];
  for (const run of start.mode === 'resume' ? [] : start.abandoned) steps.push({ action: 'abandon', run });
  for (const line of chosen.notices) steps.push({ action: 'notice', line });
  steps.push(budgetStep(plan, start));
  if (plan.land !== undefined) {
    const line = start.mode === 'clean' ? baseCommit : start.recovered.head;
    const checked = await landPrecheck(repo, plan.land, line, plan.file);
    if (checked.refusal !== undefined) return { kind: 'dry_run', steps: [...steps, { action: 'refuse', ...checked.refusal }] };
    if (checked.notice !== undefined) steps.push({ action: 'notice', line: checked.notice });
    steps.push({ action: 'land', branch: plan.land, check: 'ok' });
  }
  return { kind: 'dry_run', steps: [...steps, ...taskSteps(plan, start)] };
}

// How the run would start.
function startStep(plan: Plan, start: Start, baseCommit: string): DryStep {
  switch (start.mode) {
    case 'clean':
      return { action: 'new_run', base: plan.base, baseCommit };
    case 'resume':
      return { action: 'resume', run: start.run.runId, baseCommit: start.recovered.started.baseCommit };
    case 'continue':
      return { action: 'continue', run: start.origin, baseCommit: start.recovered.started.baseCommit };
  }
}

// The slug's spend the run would start from (a resume's own totals), against the plan's [budget].
function budgetStep(plan: Plan, start: Start): DryStep {
  const spent = start.mode === 'resume' ? { usage: start.recovered.usage, costUsd: start.recovered.costUsd } : start.carried;
  return {
    action: 'budget',
    tokens: totalTokensOf(spent.usage),
    costUsd: shownCost(spent.costUsd),
    maxTokens: plan.budget.maxTokens ?? null,
    maxCostUsd: plan.budget.maxCostUsd ?? null,
  };
}

// One step per task in dispatch order: skip or adopt what is checkpointed, dispatch the rest
// with the attempt number it would take (a resumed loop from its last durable round).
function taskSteps(plan: Plan, start: Start): DryStep[] {
  const done = new Map((start.mode === 'clean' ? [] : start.recovered.checkpoints).map((cp) => [cp.taskId, cp]));
  const byId = new Map(plan.tasks.map((t) => [t.id, t]));
  return topologicalOrder(plan).map((task): DryStep => {
    const cp = done.get(task);
    if (cp !== undefined && start.mode === 'continue') return { action: 'adopt', task, checkpoint: cp.id, run: cp.logicalRunId };
    if (cp !== undefined) return { action: 'skip', task, checkpoint: cp.id, run: cp.logicalRunId };
    const own = start.mode === 'resume' ? (start.recovered.attempts.get(task) ?? 0) : 0;
    const attempt = Math.max(own, start.attemptFloor.get(task) ?? 0) + 1;
    const round = start.mode === 'resume' ? start.recovered.durableRounds.get(task) : undefined;
    const notFound = missingPrograms(byId.get(task)!, process.env, [plan.hooks.preRun, plan.hooks.postRun]);
    return {
      action: 'dispatch',
      task,
      attempt,
      ...(round !== undefined ? { fromRound: { attempt: round.attempt, round: round.round, ref: round.ref } } : {}),
      ...(notFound.length > 0 ? { notFound } : {}),
    };
  });
}

// Up to date: every task is skipped as checkpointed in that complete run.
async function upToDateSteps(plan: Plan, end: Extract<RunEnd, { kind: 'up_to_date' }>): Promise<DryStep[]> {
  const { view } = await readRun(end.journal);
  const done = new Map(view.checkpoints.map((cp) => [cp.taskId, cp]));
  const steps: DryStep[] = [{ action: 'up_to_date', run: end.runId, resultCommit: end.resultCommit }];
  for (const task of topologicalOrder(plan)) {
    const cp = done.get(task);
    if (cp !== undefined) steps.push({ action: 'skip', task, checkpoint: cp.id, run: cp.logicalRunId });
  }
  return steps;
}
