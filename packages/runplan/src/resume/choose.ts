import { ZERO_USAGE } from '../events/types.js';
import { asideRunDirs, evidenceAttempts } from '../host/aside-runs.js';
import { nextStartOrder, runPaths } from '../host/state.js';
import { taskContractDigests } from '../plan/digest.js';
import { closeNeverStarted, closePriorRuns } from './close.js';
import { continuationStart } from './continuation-start.js';
import { inspectRuns } from './inspect.js';
import type { Refusal } from './refusal.js';
import { resumeStart } from './resume-start.js';
import { endUnverifiedJobs } from './slurm-jobs.js';
import { budgetSpentRefusal, slugSpend, slugThreadTotals } from './slug-spend.js';
import type { ChooseInput, Chosen, Decided, DecideInput } from './start.js';
import { upToDate } from './up-to-date.js';

export type { ChooseInput, Chosen, Start, StartMode } from './start.js';

/** How long the Slurm jobs a failed run left get after TERM before KILL, when a later run ends them. */
const PRIOR_JOBS_GRACE_MS = 2000;

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
  // Up to date is a decision, not a refusal: the never-started runs are closed then too.
  if (!decided.ok && decided.end.kind !== 'up_to_date') return { ...decided, notices: [] };
  // A run starts only once the Slurm jobs of the failed run before it are verified gone: also
  // when another task's failure, not the unverified teardown, is the run's receipt (its
  // attempt-closed says it; a --retry of the task ran it again beside its job).
  const last = prior.filter((p) => !p.neverStarted).at(-1);
  const jobs =
    decided.ok && !readOnly && last?.kind === 'failed'
      ? await endUnverifiedJobs(
          { runId: last.paths.runId, failedReason: last.journal.jobsUnverified ?? last.failedReason },
          PRIOR_JOBS_GRACE_MS,
        )
      : { ok: true as const, notices: [] };
  if (!jobs.ok) return { ok: false, end: { kind: 'refused', ...jobs.refusal }, notices: [] };
  const closed = readOnly ? { ok: true as const, abandoned: never.map((p) => p.paths.runId), notices: [] } : await closeNeverStarted(never);
  if (!closed.ok) return { ...closed, notices: [] };
  if (!decided.ok) return { ...decided, notices: closed.notices, abandoned: closed.abandoned };
  const start = decided.value;
  if (start.mode !== 'resume') start.abandoned.push(...closed.abandoned);
  const attemptFloor = new Map<string, number>();
  const raise = (task: string, n: number) => attemptFloor.set(task, Math.max(attemptFloor.get(task) ?? 0, n));
  for (const run of prior) for (const [task, n] of run.journal.attempts) raise(task, n);
  // A corrupt journal (this one's, or one --fresh set aside) may no longer show every attempt
  // it started: their evidence dirs, one per attempt started, do.
  const unread = [...prior.filter((p) => p.kind === 'corrupt').map((p) => p.paths.dir), ...(await asideRunDirs(slug))];
  for (const dir of unread) for (const [task, n] of await evidenceAttempts(dir)) raise(task, n);
  return {
    ok: true,
    value: { ...start, attemptFloor, carried, threadTotals: slugThreadTotals(prior) },
    notices: [...jobs.notices, ...(decided.notices ?? []), ...closed.notices],
  };
}

// Decides, read-only, between resuming the sole incomplete run, continuing a failed one,
// and starting clean; `--fresh` abandons incomplete runs first. Any doubt refuses.
async function decideRun(input: DecideInput): Promise<Decided> {
  const { prior, never, slug, plan, repo, req, runId, startOrder, digests } = input;
  const unknown = (req.retry ?? []).filter((id) => !plan.tasks.some((t) => t.id === id));
  if (unknown.length > 0) {
    return {
      ok: false,
      end: { kind: 'refused', reason: 'unknown_task', message: `--retry names no task of ${plan.file}: ${unknown.join(', ')}` },
    };
  }
  const incomplete = prior.filter((p) => p.kind === 'incomplete' || p.kind === 'corrupt');
  const refused = (r: Refusal): Decided => ({ ok: false, end: { kind: 'refused', ...r } });
  // Spend is the slug's: a new run or a continuation refuses while it is spent.
  const spentRefusal = (what: string): Decided | undefined => {
    const spent = budgetSpentRefusal(plan, input.carried, what);
    return spent === undefined ? undefined : refused(spent);
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
    return resumeStart(target, plan, repo, digests, prior);
  }
  // --new-run starts no run beside an incomplete one (it was resumed as if not given).
  if (req.newRun === true && incomplete.length > 0) {
    const ids = incomplete.map((p) => p.paths.runId).join(', ');
    return refused({
      reason: 'incomplete_run',
      message: `slug ${plan.slug} has ${incomplete.length === 1 ? 'an incomplete run' : 'incomplete runs'} (${ids}): --new-run starts no run beside ${incomplete.length === 1 ? 'it' : 'them'}`,
      hint:
        incomplete.length === 1 && incomplete[0]!.kind !== 'corrupt'
          ? `resume it: runplan run ${plan.file}   (or --fresh to abandon it and start a new run)`
          : `runplan run ${plan.file} --fresh abandons ${incomplete.length === 1 ? 'it' : 'them'} and starts a new run`,
    });
  }
  if (incomplete.length > 1) {
    const list = incomplete.map((p) => p.paths.runId).join(', ');
    return refused({
      reason: 'several_incomplete_runs',
      message: `slug ${plan.slug} has ${incomplete.length} incomplete runs: ${list}`,
      hint: `pick one: runplan run ${plan.file} --run ${incomplete[0]!.paths.runId}   (or --fresh to abandon them all)`,
    });
  }
  if (incomplete.length === 1) return resumeStart(incomplete[0]!, plan, repo, digests, prior);
  const last = prior.at(-1);
  const current = req.newRun === true ? undefined : upToDate(last, plan, digests, input.baseCommit);
  if (current !== undefined) return { ok: false, end: { kind: 'up_to_date', ...current } };
  if (last !== undefined && last.kind === 'failed' && last.failedClass !== 'abandoned' && req.newRun !== true) {
    return continuationStart(last, input);
  }
  const spent = spentRefusal('a new run');
  if (spent !== undefined) return spent;
  return { ok: true, value: { mode: 'clean', run: runPaths(slug, runId), startOrder, abandoned: [] } };
}
