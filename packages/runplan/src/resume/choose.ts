import type { ScanResult } from '@runplan/journal';
import type { Plan } from '../plan/types.js';
import { taskContractDigests } from '../plan/digest.js';
import { budgetExceeded } from '../repair/index.js';
import { roomRefusal } from '../host/disk.js';
import { readJournalFailureNote } from '../host/disk-reserve.js';
import { PLAN_DEFAULTS } from '../plan/types.js';
import { recoverRun, type RecoveredRun } from './recover.js';
import { inspectRuns, type PriorRun } from './inspect.js';
import type { Refusal } from './refusal.js';
import { closeNeverStarted, closePriorRuns } from './close.js';
import { upToDate } from './up-to-date.js';
import { slugSpend, slugThreadTotals, type SlugSpend } from './slug-spend.js';
import { ZERO_USAGE, type UsageTotals } from '../events/types.js';
import { nextStartOrder, runPaths, type RunPaths, type SlugPaths } from '../host/state.js';
import type { RunEnd, RunRequest } from '../coordinator/types.js';

/** How `run` starts relative to the slug's earlier runs. */
export type StartMode =
  | { mode: 'clean'; run: RunPaths; startOrder: number; abandoned: string[] }
  | { mode: 'resume'; run: RunPaths; recovered: RecoveredRun; scanned: ScanResult | undefined }
  | { mode: 'continue'; run: RunPaths; startOrder: number; origin: string; recovered: RecoveredRun; abandoned: string[] };

/**
 * What `run` does with the slug's earlier runs. `attemptFloor`: the highest attempt number
 * of each task in the slug's whole history, so the Nth attempt of a task is attempt N and
 * `{{run.attempt}}` never repeats for a task, across resumes, continuations and `--fresh`.
 */
export type Start = StartMode & {
  attemptFloor: Map<string, number>;
  /** The slug's spend a new run or continuation carries (zero with --reset-budget); a resume keeps its own. */
  carried: SlugSpend;
  /** The last running total of each agent thread in the slug's runs (even after --reset-budget: that spend was counted). */
  threadTotals: Map<string, UsageTotals>;
};

/** What chooseRun decides from. `digests`: the plan's task contract digests, when the caller has them already. */
export interface ChooseInput {
  slug: SlugPaths;
  plan: Plan;
  repo: string;
  req: RunRequest;
  /** The id a new run (clean or continuation) takes. */
  runId: string;
  /** What the plan's base resolves to now: a complete run on it with the same contracts is up to date. */
  baseCommit: string;
  digests?: Map<string, string>;
  /**
   * `run --dry-run`: decide without writing. Runs `--fresh` would abandon and never-started
   * runs that would be closed are named in `abandoned`, not closed; nothing is torn down.
   */
  readOnly?: boolean;
}

/** What decideRun decides from: the slug's runs without never-started ones, which are named only for `--run`. */
interface DecideInput extends Required<Omit<ChooseInput, 'readOnly'>> {
  readOnly: boolean;
  prior: PriorRun[];
  never: PriorRun[];
  /** The new run's place in the slug's history. */
  startOrder: number;
  /** What a new run or continuation would carry: the slug's spend (zero with --reset-budget). */
  carried: SlugSpend;
}

/** The chosen start, and one line for people per never-started run closed on the way. */
export type Chosen = { ok: true; value: Start; notices: string[] } | { ok: false; end: RunEnd };

// Decides how to start (see decideRun), then closes the slug's never-started runs — runs
// whose coordinator died between creating the journal and journaling run-started, so
// nothing of them ever ran. They are left out of the decision as if they did not exist (no
// intent of theirs was journaled), and closed only once it is made, so a refusal still
// writes nothing. A never-started run takes the receipt `--fresh` gives an abandoned run
// (`run-failed`, class abandoned, reason never_started; runs with that reason are passed
// over when looking for a failed run to continue). One with no whole record (zero bytes
// or a torn header) cannot take a receipt and is not written to: its directory is renamed
// aside, `<run-id>.never-started-<time>`.
export async function chooseRun({
  slug,
  plan,
  repo,
  req,
  runId,
  baseCommit,
  digests = taskContractDigests(plan),
  readOnly = false,
}: ChooseInput): Promise<Chosen> {
  const prior = await inspectRuns(slug);
  const never = prior.filter((p) => p.neverStarted);
  // A new run's place in the slug's history, taken while we hold the slug lock.
  const startOrder = nextStartOrder(prior.map((p) => p.start));
  const carried = req.resetBudget === true ? { usage: ZERO_USAGE, costUsd: 0 } : slugSpend(prior.filter((p) => !p.neverStarted));
  const decided = await decideRun({
    carried,
    prior: prior.filter((p) => !p.neverStarted && p.failedReason !== 'never_started'),
    never,
    slug,
    plan,
    repo,
    req,
    runId,
    baseCommit,
    startOrder,
    digests,
    readOnly,
  });
  if (!decided.ok) return decided;
  const closed = readOnly ? { ok: true as const, abandoned: never.map((p) => p.paths.runId), notices: [] } : await closeNeverStarted(never);
  if (!closed.ok) return closed;
  const start = decided.value;
  if (start.mode !== 'resume') start.abandoned.push(...closed.abandoned);
  const attemptFloor = new Map<string, number>();
  for (const run of prior) for (const [task, n] of run.journal.attempts) attemptFloor.set(task, Math.max(attemptFloor.get(task) ?? 0, n));
  return {
    ok: true,
    value: { ...start, attemptFloor, carried, threadTotals: slugThreadTotals(prior) },
    notices: [...(decided.notices ?? []), ...closed.notices],
  };
}

// Decides, read-only, between resuming the sole incomplete run, continuing a failed one,
// and starting clean; `--fresh` abandons incomplete runs first. Any doubt refuses.
async function decideRun(input: DecideInput): Promise<{ ok: true; value: StartMode; notices?: string[] } | { ok: false; end: RunEnd }> {
  const { prior, never, slug, plan, repo, req, runId, startOrder, digests } = input;
  const unknown = (req.retry ?? []).filter((id) => !plan.tasks.some((t) => t.id === id));
  if (unknown.length > 0) {
    return {
      ok: false,
      end: { kind: 'refused', reason: 'unknown_task', message: `--retry names no task of ${plan.file}: ${unknown.join(', ')}` },
    };
  }
  const incomplete = prior.filter((p) => p.kind === 'incomplete' || p.kind === 'corrupt');
  const refused = (r: Refusal): { ok: false; end: RunEnd } => ({ ok: false, end: { kind: 'refused', ...r } });
  // Spend is the slug's: a new run or a continuation refuses while it is spent.
  const spentRefusal = (what: string): { ok: false; end: RunEnd } | undefined => {
    const spent = spentBudget(plan, input.carried.usage, input.carried.costUsd);
    if (spent === undefined) return undefined;
    return refused({
      reason: 'budget_spent',
      message: `slug ${plan.slug} has spent its budget across its runs (${spent}; --fresh and new runs count too); ${what} would spend more`,
      hint: `raise [budget] in ${plan.file}, or runplan run ${plan.file} --reset-budget (journaled) to start its spend over`,
    });
  };
  if (req.fresh) {
    const spent = spentRefusal('a fresh run');
    if (spent !== undefined) return spent;
    const closed = input.readOnly
      ? { ok: true as const, abandoned: incomplete.map((p) => p.paths.runId), notices: [] }
      : await closePriorRuns(incomplete);
    if (!closed.ok) return closed;
    return {
      ok: true,
      value: { mode: 'clean', run: runPaths(slug, runId), startOrder, abandoned: closed.abandoned },
      notices: closed.notices,
    };
  }
  if (req.run !== undefined) {
    const target = incomplete.find((p) => p.paths.runId === req.run);
    // A never-started run has nothing to resume: the run starts as if --run were not given,
    // unless another incomplete run would then be resumed in its place.
    if (target === undefined && incomplete.length === 0 && never.some((p) => p.paths.runId === req.run)) {
      return decideRun({ ...input, req: { ...req, run: undefined } });
    }
    if (target === undefined) {
      return refused({ reason: 'no_such_run', message: `slug ${plan.slug} has no incomplete run ${req.run}`, hint: 'runplan status' });
    }
    return resumeOf(target, plan, repo, digests);
  }
  if (incomplete.length > 1) {
    const list = incomplete.map((p) => p.paths.runId).join(', ');
    return refused({
      reason: 'several_incomplete_runs',
      message: `slug ${plan.slug} has ${incomplete.length} incomplete runs: ${list}`,
      hint: `pick one: runplan run ${plan.file} --run ${incomplete[0]!.paths.runId}   (or --fresh to abandon them all)`,
    });
  }
  if (incomplete.length === 1) return resumeOf(incomplete[0]!, plan, repo, digests);
  const last = prior.at(-1);
  const current = req.newRun === true ? undefined : upToDate(last, plan, digests, input.baseCommit);
  if (current !== undefined) return { ok: false, end: { kind: 'up_to_date', ...current } };
  if (last !== undefined && last.kind === 'failed' && last.failedClass !== 'abandoned' && req.newRun !== true) {
    // After disk_full the changed input is the disk itself: no dispatch while it is still short.
    if (last.failedReason === 'disk_full') {
      const detail = last.journal.failedReceipt?.detail;
      const path = typeof detail?.path === 'string' && detail.path !== '' ? detail.path : slug.dir;
      const full = await roomRefusal(
        path,
        plan.minFree ?? PLAN_DEFAULTS.minFree,
        `run ${last.paths.runId} failed for lack of space writing ${path}`,
        plan.file,
      );
      if (full !== undefined) return refused(full);
    }
    const recovered = await recoverRun(last, { plan, repo, mode: 'continue', digests });
    if (!recovered.ok) return refused(recovered.error);
    // A task repair stopped is not run again on the same inputs: only --retry (the operator
    // says the cause changed) or a contract changed since the stopped attempt (the digest
    // its attempt-started journaled) lets a continuation dispatch it. An attempt that
    // journaled no digest counts as unchanged.
    const stopped = [...recovered.value.stopped].filter(
      ([task, s]) =>
        !(req.retry ?? []).includes(task) && digests.has(task) && (s.contractDigest === null || s.contractDigest === digests.get(task)),
    );
    if (stopped.length > 0) {
      const [task, s] = stopped[0]!;
      return refused({
        reason: 'repair_stopped',
        message: `task ${task} of run ${last.paths.runId} was stopped by repair (class ${s.class}, ${s.reason}: ${s.detail}); running it again on the same inputs would repeat it`,
        hint: `if its cause changed: runplan run ${plan.file} --retry ${task}   (or --fresh to start over)`,
      });
    }
    const spent = spentRefusal('a continuation');
    if (spent !== undefined) return spent;
    // A continuation proceeds on the base its runs started from; a moved base is said once.
    const old = recovered.value.started.baseCommit;
    const moved =
      old !== input.baseCommit
        ? [
            `runplan: base_moved: continuing from ${old}; ${input.baseCommit} is the base now — runplan run ${plan.file} --new-run starts from it`,
          ]
        : [];
    return {
      ok: true,
      value: {
        mode: 'continue',
        run: runPaths(slug, runId),
        startOrder,
        origin: last.paths.runId,
        recovered: recovered.value,
        abandoned: [],
      },
      notices: moved,
    };
  }
  const spent = spentRefusal('a new run');
  if (spent !== undefined) return spent;
  return { ok: true, value: { mode: 'clean', run: runPaths(slug, runId), startOrder, abandoned: [] } };
}

async function resumeOf(
  target: PriorRun,
  plan: Plan,
  repo: string,
  digests: Map<string, string>,
): Promise<{ ok: true; value: StartMode } | { ok: false; end: RunEnd }> {
  // A coordinator that exited 5 because its journal's disk was full: the same check as after disk_full.
  const note = await readJournalFailureNote(target.paths.dir, target.journal.coordinator);
  if (note?.reason === 'disk_full') {
    const full = await roomRefusal(
      note.path,
      plan.minFree ?? PLAN_DEFAULTS.minFree,
      `run ${target.paths.runId} stopped (exit 5) for lack of space writing ${note.path}`,
      plan.file,
    );
    if (full !== undefined) return { ok: false, end: { kind: 'refused', ...full } };
  }
  const recovered = await recoverRun(target, { plan, repo, mode: 'resume', digests });
  if (!recovered.ok) return { ok: false, end: { kind: 'refused', ...recovered.error } };
  return { ok: true, value: { mode: 'resume', run: target.paths, recovered: recovered.value, scanned: target.scan } };
}

// Whether the slug-wide budget is spent (repair.ts decides; this only words it).
export function spentBudget(plan: Plan, usage: UsageTotals, costUsd: number): string | undefined {
  return budgetExceeded(plan.budget, { usage, costUsd })?.detail;
}
