import { rename } from 'node:fs/promises';
import { teardownByTag } from '@runplan/settle';
import { openWriter, readJournal, type JournalRecord, type ScanResult } from '@runplan/journal';
import type { Plan } from './plan-types.js';
import { taskContractDigests } from './digest.js';
import { budgetExceeded } from './repair.js';
import { inspectRuns, recoverRun, type PriorRun, type Refusal, type RecoveredRun } from './resume.js';
import { ZERO_USAGE, type RunFailedData, type UsageTotals } from './events.js';
import { compactUtc, runPaths, type RunPaths, type SlugPaths } from './state.js';
import type { RunEnd, RunRequest } from './run.js';

/** What `run` does with the slug's earlier runs. */
export type Start =
  | { mode: 'clean'; run: RunPaths; abandoned: string[] }
  | { mode: 'resume'; run: RunPaths; recovered: RecoveredRun; scanned: ScanResult | undefined }
  | { mode: 'continue'; run: RunPaths; origin: string; recovered: RecoveredRun };

// Decides, read-only, between resuming the sole incomplete run, continuing a failed one,
// and starting clean; `--fresh` abandons incomplete runs first. Any doubt refuses.
// `digests`: the plan's task contract digests (computed once per run by the caller).
export async function chooseRun(
  slug: SlugPaths,
  plan: Plan,
  repo: string,
  req: RunRequest,
  runId: string,
  digests: Map<string, string> = taskContractDigests(plan),
): Promise<{ ok: true; value: Start } | { ok: false; end: RunEnd }> {
  const unknown = (req.retry ?? []).filter((id) => !plan.tasks.some((t) => t.id === id));
  if (unknown.length > 0) {
    return { ok: false, end: { kind: 'refused', reason: 'unknown_task', message: `--retry names no task of ${plan.file}: ${unknown.join(', ')}` } };
  }
  const prior = await inspectRuns(slug);
  const incomplete = prior.filter((p) => p.kind === 'incomplete' || p.kind === 'corrupt');
  const refused = (r: Refusal): { ok: false; end: RunEnd } => ({ ok: false, end: { kind: 'refused', ...r } });
  if (req.fresh) {
    const closed = await closePriorRuns(incomplete);
    if (!closed.ok) return closed;
    return { ok: true, value: { mode: 'clean', run: runPaths(slug, runId), abandoned: closed.abandoned } };
  }
  if (req.run !== undefined) {
    const target = incomplete.find((p) => p.paths.runId === req.run);
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
  if (last !== undefined && last.kind === 'failed' && last.failedClass !== 'abandoned') {
    const recovered = await recoverRun(last, plan, repo, 'continue', digests);
    if (!recovered.ok) return refused(recovered.error);
    // A task repair stopped is not run again on the same inputs: only --retry (the operator
    // says the cause changed) or a contract changed since the stopped attempt (the digest
    // its attempt-started journaled) lets a continuation dispatch it. An attempt that
    // journaled no digest counts as unchanged.
    const stopped = [...recovered.value.stopped].filter(
      ([task, s]) => !(req.retry ?? []).includes(task) && digests.has(task) && (s.contractDigest === null || s.contractDigest === digests.get(task)),
    );
    if (stopped.length > 0) {
      const [task, s] = stopped[0]!;
      return refused({
        reason: 'repair_stopped',
        message: `task ${task} of run ${last.paths.runId} was stopped by repair (class ${s.class}, ${s.reason}: ${s.detail}); running it again on the same inputs would repeat it`,
        hint: `if its cause changed: runplan run ${plan.file} --retry ${task}   (or --fresh to start over)`,
      });
    }
    const spent = spentBudget(plan, recovered.value.usage, recovered.value.costUsd);
    if (spent !== undefined) {
      return refused({ reason: 'budget_spent', message: `slug ${plan.slug} has spent its budget (${spent}); a continuation would spend more`, hint: `raise [budget] in ${plan.file}, or start over with --fresh` });
    }
    return { ok: true, value: { mode: 'continue', run: runPaths(slug, runId), origin: last.paths.runId, recovered: recovered.value } };
  }
  return { ok: true, value: { mode: 'clean', run: runPaths(slug, runId), abandoned: [] } };
}

async function resumeOf(target: PriorRun, plan: Plan, repo: string, digests: Map<string, string>): Promise<{ ok: true; value: Start } | { ok: false; end: RunEnd }> {
  const recovered = await recoverRun(target, plan, repo, 'resume', digests);
  if (!recovered.ok) return { ok: false, end: { kind: 'refused', ...recovered.error } };
  return { ok: true, value: { mode: 'resume', run: target.paths, recovered: recovered.value, scanned: target.scan } };
}

// `--fresh`: closes every incomplete run with a `run-failed` receipt of class abandoned
// (after ending its crashed attempts by ownerTag); a corrupt journal cannot take a receipt,
// so its directory is renamed aside.
async function closePriorRuns(runs: PriorRun[]): Promise<{ ok: true; abandoned: string[] } | { ok: false; end: RunEnd }> {
  const incomplete = runs.map((p) => ({ run: p.paths, corrupt: p.kind === 'corrupt' }));
  const abandoned: string[] = [];
  for (const { run, corrupt } of incomplete) {
    const survivors = await endCrashedAttempts(run);
    if (corrupt) {
      const aside = `${run.dir}.corrupt-${compactUtc(new Date())}`;
      await rename(run.dir, aside);
      abandoned.push(`${run.runId} (corrupt journal renamed to ${aside})`);
      continue;
    }
    // openWriter repairs a torn tail (and journals that it did) before the receipt.
    const writer = await openWriter(run.journal, { create: false });
    if (!writer.ok) return { ok: false, end: { kind: 'refused', reason: writer.error.reason, message: `cannot close ${run.runId} as abandoned: ${writer.error.message}` } };
    try {
      await writer.value.appendTerminal('run-failed', {
        logicalRunId: run.runId,
        class: 'abandoned',
        reason: 'abandoned',
        message: `closed by runplan run --fresh${survivors.length > 0 ? `; processes that survived teardown: ${survivors.join(' ')}` : ''}`,
        task: null,
        phase: null,
        evidence: [],
        signal: null,
        tasksDone: 0,
        attempts: 0,
        usage: ZERO_USAGE,
        costUsd: 0,
        durationMs: 0,
      } satisfies RunFailedData as unknown as Record<string, unknown>);
    } finally {
      await writer.value.close();
    }
    abandoned.push(run.runId);
  }
  return { ok: true, abandoned };
}

// Ends what is left of a dead coordinator's open attempts (attempt-started without
// attempt-closed) by their journaled ownerTags; nothing else is touched. Returns survivors.
async function endCrashedAttempts(run: RunPaths): Promise<number[]> {
  let records: JournalRecord[];
  try {
    records = (await readJournal(run.journal)).records;
  } catch {
    return [];
  }
  const open = new Map<string, string>();
  for (const r of records) {
    const d = r.data as { taskId?: unknown; attempt?: unknown; ownerTag?: unknown };
    const key = `${String(d.taskId)}.${String(d.attempt)}`;
    if (r.type === 'attempt-started' && typeof d.ownerTag === 'string') open.set(key, d.ownerTag);
    if (r.type === 'attempt-closed') open.delete(key);
  }
  const survivors: number[] = [];
  for (const tag of open.values()) {
    try {
      survivors.push(...(await teardownByTag(tag, { graceMs: 2000 })).survivors);
    } catch {
      // A tag settle does not recognise names nothing we could have started.
    }
  }
  return survivors;
}

// Whether the slug-wide budget is spent (repair.ts decides; this only words it).
export function spentBudget(plan: Plan, usage: UsageTotals, costUsd: number): string | undefined {
  return budgetExceeded(plan.budget, { usage, costUsd })?.detail;
}

