import { readFile } from 'node:fs/promises';
import { isPlainObject } from '@runplan/common';
import type { AttemptEntry } from '../events/attempt-log.js';
import { shownCost, type UsageTotals } from '../events/types.js';
import type { RunView } from '../events/view.js';

// What `runplan report` shows, as data: built from the one run view (RunView) of a journal
// and the masked plan copy beside it; `--json` prints it, the HTML embeds it once.

/** One attempt's bar: times in ms from the run's start. */
export interface ReportAttempt {
  task: string;
  attempt: number;
  start: number;
  end: number | null;
  phases: Array<{ phase: string; from: number; to: number }>;
  rounds: number[];
  outcome: string | null;
  class: string | null;
  reason: string | null;
  /** Agent text (untrusted): shown only as text. */
  message: string | null;
  fingerprint: string | null;
  /** "retried: fingerprint changed a1b2 → c3d4", "not retried: same as attempt 2", … */
  verdict: string | null;
  /** When the provider said its limit resets (ms from the run's start): a provider wait. */
  waitUntil: number | null;
  tokens: number;
  costUsd: number;
  evidence: string[];
  evidenceDir: string;
  resultCommit: string | null;
}

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
  outcome: 'complete' | 'failed' | 'incomplete';
  exitCode: number | null;
  class: string | null;
  reason: string | null;
  message: string | null;
  continues: string | null;
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
  tasks: ReportTask[];
  attempts: ReportAttempt[];
  marks: Array<{ kind: string; at: number; task: string | null }>;
}

const tokensOf = (u: UsageTotals | null): number =>
  u === null ? 0 : u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;

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
    if (typeof budget.max_tokens === 'number') out.budget.maxTokens = budget.max_tokens;
    if (typeof budget.max_cost_usd === 'number') out.budget.maxCostUsd = budget.max_cost_usd;
  } catch {
    // A missing or unreadable plan copy: the report still shows what the journal says.
  }
  return out;
}

// Repair's verdict on one failed attempt, against the task's previous failure.
function verdictOf(a: AttemptEntry, previous: AttemptEntry | undefined): string | null {
  if (a.outcome === null || a.outcome === 'success' || a.action === null) return null;
  const fp = (a.fingerprint ?? '').slice(0, 8);
  const before = previous?.fingerprint?.slice(0, 8);
  if (a.action === 'stop')
    return before === fp && previous !== undefined ? `not retried: same as attempt ${previous.attempt}` : 'not retried';
  const changed = a.changed !== null ? ` (${a.changed})` : '';
  if (before !== undefined && before !== fp) return `retried: fingerprint changed ${before} → ${fp}${changed}`;
  return `retried${changed}`;
}

// The report of one run, from its folded journal.
export async function reportData(view: RunView, o: { journal: string; resumeCommand: string | null }): Promise<ReportData> {
  const started = view.started;
  const t0 = Date.parse(view.startedTs ?? view.createdAt ?? '') || 0;
  const at = (ts: string | null): number | null => (ts === null ? null : Math.max(0, (Date.parse(ts) || t0) - t0));
  const plan = await readPlanCopy(started?.planCopy);
  const last = new Map<string, AttemptEntry>();
  const attempts: ReportAttempt[] = [];
  const perTask = new Map<string, { tokens: number; costUsd: number; attempts: number }>();
  for (const a of view.log.entries.values()) {
    const start = at(a.startedTs)!;
    let from = start;
    const phases = a.marks.map((m) => {
      const to = at(m.ts)!;
      const p = { phase: m.phase, from, to };
      from = to;
      return p;
    });
    const tokens = tokensOf(a.usage);
    attempts.push({
      task: a.taskId,
      attempt: a.attempt,
      start,
      end: at(a.closedTs),
      phases,
      rounds: a.rounds.map((r) => at(r)!),
      outcome: a.outcome,
      class: a.class,
      reason: a.reason,
      message: a.message,
      fingerprint: a.fingerprint,
      verdict: verdictOf(a, last.get(a.taskId)),
      waitUntil: a.resetAtMs !== null ? Math.max(0, a.resetAtMs - t0) : null,
      tokens,
      costUsd: shownCost(a.costUsd),
      evidence: a.evidence,
      evidenceDir: a.evidenceDir,
      resultCommit: a.resultCommit,
    });
    if (a.outcome !== null && a.outcome !== 'success') last.set(a.taskId, a);
    const t = perTask.get(a.taskId) ?? { tokens: 0, costUsd: 0, attempts: 0 };
    perTask.set(a.taskId, { tokens: t.tokens + tokens, costUsd: t.costUsd + a.costUsd, attempts: t.attempts + 1 });
  }
  const ids = [...new Set([...plan.needs.keys(), ...view.tasks.keys()])];
  const done = new Set(view.checkpoints.map((c) => c.taskId));
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
          ? 'waiting'
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
    outcome: terminal === undefined ? 'incomplete' : complete !== undefined ? 'complete' : 'failed',
    exitCode:
      terminal === undefined
        ? null
        : complete !== undefined
          ? 0
          : failed?.class !== 'interrupted'
            ? 1
            : failed.signal === 'SIGINT'
              ? 130
              : 143,
    class: failed?.class ?? null,
    reason: failed?.reason ?? null,
    message: failed?.message ?? null,
    continues: started?.continues ?? null,
    crashes: view.log.marks.filter((m) => m.kind === 'coordinator-crashed' || m.kind === 'journal-failed').length,
    base: started?.base ?? '',
    baseCommit: started?.baseCommit ?? '',
    result: typeof complete?.resultCommit === 'string' ? complete.resultCommit : (view.checkpoints.at(-1)?.resultCommit ?? null),
    landed: typeof complete?.landed === 'string' ? complete.landed : null,
    tasksTotal: view.taskCount,
    tasksDone: view.tasksDone(),
    attemptsTotal: view.attemptsTotal,
    tokens: tokensOf(view.usage),
    costUsd: shownCost(view.costUsd),
    budget: plan.budget,
    wallMs: Number.isFinite(end) ? Math.max(0, end - t0) : 0,
    startedAt: view.startedTs ?? null,
    resumeCommand: terminal === undefined || failed !== undefined ? o.resumeCommand : null,
    tasks,
    attempts,
    marks: view.log.marks.map((m) => ({ kind: m.kind, at: at(m.ts)!, task: m.taskId ?? null })),
  };
}
