import type { RunEvent } from './read.js';
import { addUsage, ZERO_USAGE, type UsageTotals } from './usage.js';

// Every attempt of a run as its records tell it, for the report: when each phase ended, what
// it spent, how it closed and what repair decided. Part of RunView's one fold (RunView.add).

/** A phase boundary of one attempt: the step record that ended a phase, and when. */
export interface PhaseMark {
  /** The phase that ended (`pre_run`, `command`, `gates`, `post_run`, `integrate`, `checkpoint`). */
  phase: string;
  ts: string;
}

/** One attempt, start to close. */
export interface AttemptEntry {
  taskId: string;
  attempt: number;
  startedTs: string;
  marks: PhaseMark[];
  /** Loop rounds (round-done ts), drawn as ticks. */
  rounds: string[];
  usage: UsageTotals | null;
  costUsd: number;
  closedTs: string | null;
  outcome: string | null;
  class: string | null;
  reason: string | null;
  /** What the failure said (agent text: untrusted). */
  message: string | null;
  evidence: string[];
  evidenceDir: string;
  /** Repair's verdict on this attempt's failure. */
  fingerprint: string | null;
  action: string | null;
  /** When repair retried: what it said changes (evidence, time, base), and the wait. */
  changed: string | null;
  delayMs: number;
  /** When the provider wait after this attempt ends (provider-wait `until`; older journals: the failure's reset time). */
  resetAtMs: number | null;
  resultCommit: string | null;
  /** The engine's jobs of the attempt (Slurm), in submission order; none for a local one. */
  jobs: AttemptJob[];
}

/** One job of an attempt: its id, which phase submitted it, and the engine's final state once journaled. */
export interface AttemptJob {
  jobId: string;
  phase: string;
  state: string | null;
}

/** A run-level moment the timeline marks: a coordinator crash and its resume. */
export interface RunMark {
  kind: 'coordinator-crashed' | 'journal-failed' | 'checkpoint-adopted' | 'leftovers-ended';
  ts: string;
  taskId?: string;
}

const PHASE_OF: Partial<Record<RunEvent['type'], string>> = {
  'pre-run-done': 'pre_run',
  'command-settled': 'command',
  'post-run-done': 'post_run',
  integrated: 'integrate',
  checkpoint: 'checkpoint',
};

/** What one task's attempts spent in this run (the live table's TOKENS and COST, without a walk over every attempt). */
export interface TaskSpend {
  tokens: number;
  costUsd: number;
  /** Whether any record of the task reported usage or a cost: unknown is shown as `-`, not 0. */
  known: boolean;
}

const tokensOf = (u: UsageTotals): number => u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;

export class AttemptLog {
  /** By `task.attempt`, in the order attempts started. */
  readonly entries = new Map<string, AttemptEntry>();
  readonly marks: RunMark[] = [];
  /** By task: the sum of its attempts' usage and cost, kept as the records come. */
  readonly spent = new Map<string, TaskSpend>();

  add(e: RunEvent): void {
    if (e.type === 'coordinator-crashed' || e.type === 'journal-failed' || e.type === 'leftovers-ended') {
      this.marks.push({ kind: e.type, ts: e.ts });
      return;
    }
    if (e.type === 'checkpoint-adopted') {
      this.marks.push({ kind: e.type, ts: e.ts, taskId: e.data.taskId });
      return;
    }
    if (e.type === 'attempt-started') {
      const d = e.data;
      this.entries.set(`${d.taskId}.${d.attempt}`, {
        taskId: d.taskId,
        attempt: d.attempt,
        startedTs: e.ts,
        marks: [],
        rounds: [],
        usage: null,
        costUsd: 0,
        closedTs: null,
        outcome: null,
        class: null,
        reason: null,
        message: null,
        evidence: [],
        evidenceDir: String(d.evidenceDir),
        fingerprint: null,
        action: null,
        changed: null,
        delayMs: 0,
        resetAtMs: null,
        resultCommit: null,
        jobs: [],
      });
      return;
    }
    const d = e.data as { taskId?: unknown; attempt?: unknown };
    const a = typeof d.taskId === 'string' ? this.entries.get(`${d.taskId}.${String(d.attempt)}`) : undefined;
    if (a === undefined) return;
    this.step(a, e);
  }

  // One record of an attempt already started.
  private step(a: AttemptEntry, e: RunEvent): void {
    const phase = e.type === 'gates-done' ? (e.data.phase === 'integrate' ? 'integrate' : 'gates') : PHASE_OF[e.type];
    if (phase !== undefined) a.marks.push({ phase, ts: e.ts });
    switch (e.type) {
      case 'command-settled':
      case 'usage': {
        // A loop journals a command-settled per round, a resumed coordinator a usage recount
        // of a crashed attempt: both add to what the attempt spent.
        const usage = { ...ZERO_USAGE, ...e.data.usage };
        const cost = typeof e.data.costUsd === 'number' ? e.data.costUsd : 0;
        a.usage = addUsage(a.usage ?? ZERO_USAGE, usage);
        a.costUsd += cost;
        const t = this.spent.get(a.taskId) ?? { tokens: 0, costUsd: 0, known: false };
        const known = t.known || tokensOf(usage) > 0 || typeof e.data.costUsd === 'number';
        this.spent.set(a.taskId, { tokens: t.tokens + tokensOf(usage), costUsd: t.costUsd + cost, known });
        break;
      }
      case 'round-done':
        a.rounds.push(e.ts);
        break;
      case 'job-submitted':
        a.jobs.push({ jobId: e.data.jobId, phase: e.data.phase, state: null });
        break;
      case 'job-ended': {
        const job = a.jobs.find((j) => j.jobId === e.data.jobId);
        if (job !== undefined) job.state = e.data.state;
        break;
      }
      case 'checkpoint':
        a.resultCommit = e.data.resultCommit;
        break;
      case 'attempt-closed':
        a.closedTs = e.ts;
        a.outcome = e.data.outcome;
        a.class = e.data.class;
        a.reason = e.data.reason;
        a.message = e.data.failure?.message ?? null;
        a.evidence = e.data.evidence;
        a.resetAtMs = e.data.failure?.resetAtMs ?? null;
        break;
      case 'provider-wait': {
        // The wait as the coordinator held it (a reset, or the backoff when none was named).
        const until = Date.parse(e.data.until);
        if (Number.isFinite(until)) a.resetAtMs = until;
        break;
      }
      case 'repair-decided':
        a.fingerprint = e.data.fingerprint;
        a.action = e.data.action;
        a.changed = e.data.changed;
        a.delayMs = e.data.delayMs;
        break;
      default:
        break;
    }
  }
}
