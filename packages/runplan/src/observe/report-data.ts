import { readFile } from 'node:fs/promises';
import { isPlainObject } from '@runplan/common';
import { interruptedExitCode } from '../events/receipt.js';
import { shownCost, type RunFailedData } from '../events/types.js';
import type { Plan } from '../plan/types.js';
import { type RunView, resetHasPassed } from '../events/view.js';
import { attemptsOf, type FoldedRun, type ReportAttempt, type ReportMark, tokensOf } from './report-attempts.js';

export type { FoldedRun, ReportAttempt, ReportMark } from './report-attempts.js';

// What `runplan report` shows, as data: built from the one run view (RunView) of a journal —
// and of each run it continued, folded the same way — and the masked plan copy beside it;
// `--json` prints it, the HTML embeds it once.

export interface ReportTask {
  id: string;
  needs: string[];
  state: string;
  attempts: number;
  tokens: number;
  costUsd: number;
}

export interface ReportData {
  format: 1;
  slug: string;
  runId: string;
  journal: string;
  /** `corrupt`: the journal fails closed at some record; the report shows what comes before it. */
  outcome: 'complete' | 'failed' | 'incomplete' | 'corrupt';
  exitCode: number | null;
  class: string | null;
  reason: string | null;
  message: string | null;
  /** An interruption after a task had failed on its own: that failure (the receipt's `firstFailure`). */
  firstFailure: { task: string; class: string; reason: string; phase: string } | null;
  continues: string | null;
  /** The runs this report covers, oldest first: those this one continued, then itself (its directory id last). */
  runs: Array<{ runId: string; startedAt: string | null; outcome: 'complete' | 'failed' | 'incomplete' }>;
  crashes: number;
  base: string;
  baseCommit: string;
  result: string | null;
  landed: string | null;
  tasksTotal: number;
  tasksDone: number;
  attemptsTotal: number;
  tokens: number;
  costUsd: number;
  budget: { maxTokens: number | null; maxCostUsd: number | null };
  wallMs: number;
  startedAt: string | null;
  resumeCommand: string | null;
  /**
   * Why `resumeCommand` alone would be refused, and what goes with it: tasks repair stopped
   * (`--retry` them if their cause changed), a provider reset not yet passed, a spent budget.
   */
  resumeNote: string | null;
  tasks: ReportTask[];
  attempts: ReportAttempt[];
  marks: ReportMark[];
}

/**
 * What the report reads from a run's plan copy: each task's needs (in plan order) and the
 * budget. The coordinator that just wrote the copy hands these over from its plan (when no
 * secret was masked in it, they are what reading the copy back gives) so the report at the
 * receipt does not parse the copy again (~30 ms for 10k tasks).
 */
export interface PlanCopyFacts {
  /** The plan copy they are of: used only when run-started names this copy. */
  path: string;
  needs: Map<string, string[]>;
  budget: ReportData['budget'];
}

// The facts of the plan copy at `path` written from `plan` with nothing masked.
export function planCopyFacts(path: string, plan: Pick<Plan, 'tasks' | 'budget'>): PlanCopyFacts {
  return {
    path,
    needs: new Map(plan.tasks.map((t) => [t.id, t.needs.map(String)])),
    budget: { maxTokens: plan.budget.maxTokens ?? null, maxCostUsd: plan.budget.maxCostUsd ?? null },
  };
}

// The plan copy's task needs and budget (the masked copy the run wrote beside its journal).
async function readPlanCopy(path: string | undefined): Promise<{ needs: Map<string, string[]>; budget: ReportData['budget'] }> {
  const out = { needs: new Map<string, string[]>(), budget: { maxTokens: null, maxCostUsd: null } as ReportData['budget'] };
  if (path === undefined) return out;
  try {
    const raw = JSON.parse(await readFile(path, 'utf8')) as unknown;
    if (!isPlainObject(raw)) return out;
    const tasks = Array.isArray(raw.tasks) ? raw.tasks : [];
    for (const t of tasks) {
      if (isPlainObject(t) && typeof t.id === 'string') out.needs.set(t.id, Array.isArray(t.needs) ? t.needs.map(String) : []);
    }
    const budget = isPlainObject(raw.budget) ? raw.budget : {};
    if (typeof budget.maxTokens === 'number') out.budget.maxTokens = budget.maxTokens;
    if (typeof budget.maxCostUsd === 'number') out.budget.maxCostUsd = budget.maxCostUsd;
  } catch {
    // A missing or unreadable plan copy: the report still shows what the journal says.
  }
  return out;
}

// How a run's journal ended.
const outcomeOf = (view: RunView): 'complete' | 'failed' | 'incomplete' =>
  view.terminal === undefined ? 'incomplete' : view.completeReceipt !== undefined ? 'complete' : 'failed';

// The report of one run, from its folded journal and those of the runs it continued (`continued`, oldest first).
export async function reportData(
  view: RunView,
  o: {
    journal: string;
    resumeCommand: string | null;
    runId?: string;
    continued?: FoldedRun[];
    planCopy?: PlanCopyFacts | undefined;
    /** Where and why the journal is corrupt, when it is: the report's outcome and message. */
    corrupt?: string;
  },
): Promise<ReportData> {
  const started = view.started;
  const runs: FoldedRun[] = [...(o.continued ?? []), { runId: o.runId ?? started?.logicalRunId ?? '', view }];
  const first = runs[0]!.view;
  const t0 = Date.parse(first.startedTs ?? first.createdAt ?? '') || 0;
  const given = o.planCopy;
  const plan = given !== undefined && given.path === started?.planCopy ? given : await readPlanCopy(started?.planCopy);
  const { attempts, marks } = attemptsOf(runs, t0);
  const perTask = new Map<string, { tokens: number; costUsd: number; attempts: number }>();
  for (const a of attempts) {
    const t = perTask.get(a.task) ?? { tokens: 0, costUsd: 0, attempts: 0 };
    perTask.set(a.task, { tokens: t.tokens + a.tokens, costUsd: t.costUsd + a.costUsd, attempts: t.attempts + 1 });
  }
  const ids = [...new Set([...plan.needs.keys(), ...view.tasks.keys()])];
  const done = new Set(view.checkpoints.map((c) => c.taskId));
  // Once the run has its receipt, a task that never started will not: not dispatched, not waiting.
  const ended = view.terminal !== undefined;
  const tasks = ids.map((id) => {
    const t = perTask.get(id) ?? { tokens: 0, costUsd: 0, attempts: 0 };
    const step = view.tasks.get(id);
    const state = done.has(id)
      ? step?.step === 'checkpoint-adopted'
        ? 'adopted'
        : 'done'
      : view.stopped.has(id)
        ? 'failed'
        : step?.step === undefined
          ? ended
            ? 'not_dispatched'
            : 'waiting'
          : step.step === 'attempt-closed'
            ? String(step.closed?.outcome)
            : 'running';
    return { id, needs: plan.needs.get(id) ?? [], state, attempts: t.attempts, tokens: t.tokens, costUsd: shownCost(t.costUsd) };
  });
  const terminal = view.terminal;
  const failed = view.failedReceipt;
  const complete = terminal?.type === 'run-complete' ? (terminal.data as Record<string, unknown>) : undefined;
  const end = terminal !== undefined ? Date.parse(terminal.ts) : Date.parse(view.lastEvent ?? '');
  return {
    format: 1,
    slug: started?.slug ?? '',
    runId: started?.logicalRunId ?? '',
    journal: o.journal,
    outcome: o.corrupt !== undefined ? 'corrupt' : outcomeOf(view),
    exitCode:
      terminal === undefined ? null : complete !== undefined ? 0 : failed?.class !== 'interrupted' ? 1 : interruptedExitCode(failed.signal),
    class: failed?.class ?? null,
    reason: failed?.reason ?? null,
    message: o.corrupt ?? failed?.message ?? null,
    firstFailure: failed?.firstFailure ?? null,
    continues: started?.continues ?? null,
    runs: runs.map((r) => ({ runId: r.runId, startedAt: r.view.startedTs ?? null, outcome: outcomeOf(r.view) })),
    crashes: marks.filter((m) => m.kind === 'coordinator-crashed' || m.kind === 'journal-failed').length,
    base: started?.base ?? '',
    baseCommit: started?.baseCommit ?? '',
    result: typeof complete?.resultCommit === 'string' ? complete.resultCommit : (view.checkpoints.at(-1)?.resultCommit ?? null),
    landed: typeof complete?.landed === 'string' ? complete.landed : null,
    tasksTotal: view.taskCount,
    tasksDone: view.tasksDone(),
    attemptsTotal: runs.reduce((n, r) => n + r.view.attemptsTotal, 0),
    tokens: tokensOf(view.usage),
    costUsd: shownCost(view.costUsd),
    budget: plan.budget,
    wallMs: Number.isFinite(end) ? Math.max(0, end - t0) : 0,
    startedAt: view.startedTs ?? null,
    resumeCommand: o.corrupt !== undefined || terminal === undefined || failed !== undefined ? o.resumeCommand : null,
    resumeNote: o.corrupt === undefined && failed !== undefined ? resumeNote(view, failed) : null,
    tasks,
    attempts,
    marks,
  };
}

// What a continuation of this failed run would refuse on, as the run would say it
// (resume/continuation-start.ts, slug-spend.ts): null when the plain command goes on.
function resumeNote(view: RunView, failed: RunFailedData): string | null {
  const notes: string[] = [];
  const now = Date.now();
  const stopped = [...view.stopped].filter(([, s]) => !resetHasPassed(s, now));
  const waiting = stopped.filter(([, s]) => s.resetAtMs !== null);
  const others = stopped.filter(([, s]) => s.resetAtMs === null);
  if (waiting.length > 0)
    notes.push(`not before ${new Date(Math.max(...waiting.map(([, s]) => s.resetAtMs!))).toISOString()}, when the provider's limit resets`);
  if (others.length > 0)
    notes.push(
      `refused while ${others.map(([task]) => task).join(', ')} ${others.length === 1 ? 'stays' : 'stay'} stopped by repair: add ${others.map(([task]) => `--retry ${task}`).join(' ')} if the cause changed`,
    );
  if (failed.class === 'budget') notes.push("refused while the slug's budget is spent: raise [budget] in the plan, or add --reset-budget");
  return notes.length > 0 ? notes.join('; ') : null;
}
