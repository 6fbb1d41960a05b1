import type { AttemptEntry, AttemptJob } from '../events/attempt-log.js';
import { shownCost, type UsageTotals } from '../events/types.js';
import type { RunView } from '../events/view.js';

// The report's attempt bars and marks of one run (a continuation's report draws those of the
// runs it continued too), in ms from the start of the first of them.

/** One attempt's bar: times in ms from the first run's start. */
export interface ReportAttempt {
  /** The run (its directory id) the attempt belongs to: a continuation's report holds those of the runs it continued. */
  run: string;
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
  /** When the provider said its limit resets (ms from the first run's start): a provider wait. */
  waitUntil: number | null;
  tokens: number;
  costUsd: number;
  evidence: string[];
  evidenceDir: string;
  resultCommit: string | null;
  /** The attempt's Slurm jobs (id, phase, final state): where it ran, to look up with scontrol or sacct. */
  jobs: AttemptJob[];
}

/** A run-level moment the timeline marks: a crash, a resume, an adopted checkpoint, the start of a continuation. */
export interface ReportMark {
  kind: string;
  at: number;
  task: string | null;
  run: string;
}

/** One run of the report, folded by the one RunView. */
export interface FoldedRun {
  runId: string;
  view: RunView;
}

export const tokensOf = (u: UsageTotals | null): number =>
  u === null ? 0 : u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;

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

// Every attempt and mark of the runs, oldest run first; `t0` is the first run's start.
export function attemptsOf(runs: FoldedRun[], t0: number): { attempts: ReportAttempt[]; marks: ReportMark[] } {
  const at = (ts: string | null): number | null => (ts === null ? null : Math.max(0, (Date.parse(ts) || t0) - t0));
  const attempts: ReportAttempt[] = [];
  const marks: ReportMark[] = [];
  // A task's previous failure, across the runs: a continuation's retry chain goes on from it.
  const last = new Map<string, AttemptEntry>();
  runs.forEach(({ runId, view }, i) => {
    if (i > 0) marks.push({ kind: 'run-continued', at: at(view.startedTs ?? view.createdAt ?? null) ?? 0, task: null, run: runId });
    for (const m of view.log.marks) marks.push({ kind: m.kind, at: at(m.ts)!, task: m.taskId ?? null, run: runId });
    for (const a of view.log.entries.values()) {
      const start = at(a.startedTs)!;
      let from = start;
      const phases = a.marks.map((m) => {
        const to = at(m.ts)!;
        const p = { phase: m.phase, from, to };
        from = to;
        return p;
      });
      attempts.push({
        run: runId,
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
        tokens: tokensOf(a.usage),
        costUsd: shownCost(a.costUsd),
        evidence: a.evidence,
        evidenceDir: a.evidenceDir,
        resultCommit: a.resultCommit,
        jobs: a.jobs,
      });
      if (a.outcome !== null && a.outcome !== 'success') last.set(a.taskId, a);
    }
  });
  return { attempts, marks };
}
