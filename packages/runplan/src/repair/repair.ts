import { tmpdir } from 'node:os';
import type { SettleReason } from '@runplan/settle';
import { canonicalJson, sha256Hex } from '../plan/digest.js';
import { totalTokens } from '../agent/state.js';
import type { AgentState, Usage } from '../agent/state.js';
import { DEFAULT_CAPS } from '../plan/types.js';
import type { Plan, RepairCaps } from '../plan/types.js';

export { DEFAULT_CAPS } from '../plan/types.js';

/** Why an attempt (or the run) failed; decides whether and how it may be tried again. */
export type FailureClass =
  | 'task'
  | 'gate'
  | 'environment'
  | 'provider'
  | 'timeout'
  | 'teardown'
  | 'integration'
  | 'stagnation'
  | 'needs_human'
  | 'budget'
  | 'interrupted'
  | 'abandoned'
  | 'engine'
  | 'invariant';

export const FAILURE_CLASSES: readonly FailureClass[] = [
  'task',
  'gate',
  'environment',
  'provider',
  'timeout',
  'teardown',
  'integration',
  'stagnation',
  'needs_human',
  'budget',
  'interrupted',
  'abandoned',
  'engine',
  'invariant',
];

export interface AttemptFailure {
  class: FailureClass;
  /** snake_case slug: `exited`, `gate_failed`, `zero_diff`, `rounds_exhausted`, … */
  reason: string;
  /** The step that failed: pre_run, command, gates, post_run, commit, integrate, land. */
  phase: string;
  /** Tail of stderr / gate output (secrets already masked); normalized before hashing. */
  evidence: string;
  /** The integration head the attempt started from. */
  baseCommit: string;
  contractDigest: string;
  attempt: number;
  /** provider: when the agent said its limit resets (epoch ms). */
  resetAtMs?: number;
}

/** A task's failure history, counted from the journal (so a crash cannot reset it). */
export interface TaskHistory {
  /** Failed attempts so far (all classes). */
  attempts: number;
  byClass: Partial<Record<FailureClass, number>>;
  /** Fingerprints of earlier failed attempts, oldest first. */
  fingerprints: string[];
  /** Attempts lost to a coordinator crash (own cap, CRASH_CAP). */
  crashes: number;
}

/**
 * What the next attempt would change. `evidence`: the prompt carries the previous
 * failure's evidence; `time`: the provider is asked again after waiting; `base`: the task
 * is re-dispatched from the new integration head.
 */
export type ChangedInput = 'evidence' | 'time' | 'base';

export type RepairDecision =
  | { action: 'retry'; delayMs: number; changed: ChangedInput }
  /**
   * `repeated_failure`: same fingerprint as an earlier attempt; `cap_exhausted`: the
   * class's cap of attempts is used up; `not_retryable`: the class (or reason) is never retried.
   */
  | { action: 'stop'; reason: 'repeated_failure' | 'cap_exhausted' | 'not_retryable'; detail: string };

type CapKey = 'task' | 'gate' | 'timeout' | 'provider' | 'integration';

/** One row of the transition table. */
interface Transition {
  /** Which cap counts this class's attempts; undefined = never retried. */
  cap?: CapKey;
  /** What the retry changes. */
  changed?: ChangedInput;
  /** Whether an identical fingerprint may be dispatched again (only when time is the change). */
  repeatAllowed: boolean;
}

/**
 * The one transition table (DESIGN.md "Failure classes and repair", issue 8):
 *
 *   class         cap (default)     retry while               changes
 *   task          task (3)          fingerprint new           evidence in the prompt
 *   gate          gate (3)          fingerprint new           evidence in the prompt
 *   timeout       timeout (2)       fingerprint new           evidence in the prompt
 *   provider      provider (4)      always (until cap)        time (backoff)
 *   integration   integration (2)   fingerprint new           base (new integration head)
 *   environment, teardown, invariant, budget, stagnation, needs_human, engine,
 *   interrupted, abandoned          never
 *
 * Also never retried whatever the class: reason `rounds_exhausted` (a loop that used all
 * its rounds) and `land_moved` (a landing branch someone else moved).
 */
export const TRANSITIONS: Readonly<Record<FailureClass, Transition>> = Object.freeze({
  task: { cap: 'task', changed: 'evidence', repeatAllowed: false },
  gate: { cap: 'gate', changed: 'evidence', repeatAllowed: false },
  timeout: { cap: 'timeout', changed: 'evidence', repeatAllowed: false },
  provider: { cap: 'provider', changed: 'time', repeatAllowed: true },
  integration: { cap: 'integration', changed: 'base', repeatAllowed: false },
  environment: { repeatAllowed: false },
  teardown: { repeatAllowed: false },
  invariant: { repeatAllowed: false },
  budget: { repeatAllowed: false },
  stagnation: { repeatAllowed: false },
  needs_human: { repeatAllowed: false },
  engine: { repeatAllowed: false },
  interrupted: { repeatAllowed: false },
  abandoned: { repeatAllowed: false },
});

export const NEVER_RETRIED_REASONS: readonly string[] = ['rounds_exhausted', 'land_moved'];

/** Coordinator crashes per task before the task fails with class `engine`. */
export const CRASH_CAP = 2;

/** Longest exponential provider backoff when the provider names no reset time. */
export const MAX_BACKOFF_MS = 60 * 60_000;

export function emptyHistory(): TaskHistory {
  return { attempts: 0, byClass: {}, fingerprints: [], crashes: 0 };
}

// The history after one more failed attempt (a new object; the input is not changed).
export function recordFailure(history: TaskHistory, failure: { class: FailureClass; fingerprint: string }): TaskHistory {
  return {
    attempts: history.attempts + 1,
    byClass: { ...history.byClass, [failure.class]: (history.byClass[failure.class] ?? 0) + 1 },
    fingerprints: [...history.fingerprints, failure.fingerprint],
    crashes: history.crashes,
  };
}

/**
 * Decides what follows a failed attempt. `history` holds the EARLIER failures of the task
 * (not this one). Order: never-retried class or reason → repeated fingerprint (except
 * provider) → cap (this failure counted) → retry with what changes.
 */
export function decideRepair(
  failure: AttemptFailure & { fingerprint: string },
  history: TaskHistory,
  caps: RepairCaps = DEFAULT_CAPS,
  opts: { now?: number } = {},
): RepairDecision {
  const row = TRANSITIONS[failure.class];
  if (row.cap === undefined || row.changed === undefined) {
    return { action: 'stop', reason: 'not_retryable', detail: `class ${failure.class} is never retried` };
  }
  if (NEVER_RETRIED_REASONS.includes(failure.reason)) {
    return { action: 'stop', reason: 'not_retryable', detail: `${failure.reason} is never retried` };
  }
  if (!row.repeatAllowed && history.fingerprints.includes(failure.fingerprint)) {
    const earlier = history.fingerprints.indexOf(failure.fingerprint) + 1;
    return {
      action: 'stop',
      reason: 'repeated_failure',
      detail: `same failure as failed attempt ${earlier} (fingerprint ${failure.fingerprint.slice(0, 12)})`,
    };
  }
  const cap = caps[row.cap];
  const used = (history.byClass[failure.class] ?? 0) + 1;
  if (used >= cap) {
    return {
      action: 'stop',
      reason: 'cap_exhausted',
      detail: `${used} ${failure.class} failure${used === 1 ? '' : 's'}, cap ${row.cap} = ${cap}`,
    };
  }
  const delayMs = row.changed === 'time' ? providerDelay(failure, history, caps, opts.now ?? Date.now()) : 0;
  return { action: 'retry', delayMs, changed: row.changed };
}

// Wait until the reported reset, else backoff doubling per earlier provider failure.
export function providerDelay(failure: Pick<AttemptFailure, 'resetAtMs'>, history: TaskHistory, caps: RepairCaps, now: number): number {
  if (failure.resetAtMs !== undefined && Number.isFinite(failure.resetAtMs)) return Math.max(0, Math.ceil(failure.resetAtMs - now));
  const earlier = history.byClass.provider ?? 0;
  return Math.min(MAX_BACKOFF_MS, caps.backoffMs * 2 ** earlier);
}

// After a coordinator crash lost an attempt: retry it, or fail the task with class engine.
export function decideAfterCrash(
  history: TaskHistory,
): { action: 'retry' } | { action: 'stop'; class: 'engine'; reason: 'crash_cap_exhausted'; detail: string } {
  if (history.crashes + 1 > CRASH_CAP) {
    return {
      action: 'stop',
      class: 'engine',
      reason: 'crash_cap_exhausted',
      detail: `the coordinator crashed ${history.crashes + 1} times during this task (cap ${CRASH_CAP})`,
    };
  }
  return { action: 'retry' };
}

/**
 * Evidence with what differs between two runs of the same failure masked, so identical
 * failures get identical fingerprints: ANSI colours, the attempt's own paths, temp paths,
 * UUIDs, timestamps, clock times, hex ids (>= 7 hex digits holding a digit), durations and
 * pids. Line endings and trailing spaces are normalized too.
 */
export function normalizeEvidence(text: string, ownPaths: readonly string[], opts: { tmpDir?: string } = {}): string {
  let out = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');
  for (const path of [...ownPaths].filter((p) => p.length > 1).sort((a, b) => b.length - a.length)) {
    out = out.split(path).join('<own>');
  }
  const tmp = (opts.tmpDir ?? tmpdir()).replace(/\/+$/, '');
  const tmpRoots = [...new Set([tmp, '/tmp', '/var/tmp', '/private/tmp', '/var/folders'])].filter((p) => p.length > 1);
  for (const root of tmpRoots.sort((a, b) => b.length - a.length)) {
    const escaped = root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`(?<![\\w.-])${escaped}(?:/[^\\s'"\`:,;()\\[\\]{}<>]*)?(?![\\w-])`, 'g'), '<tmp>');
  }
  out = out
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g, '<time>')
    .replace(/\b\d{8}T\d{6}(?:\.\d+)?Z?\b/g, '<time>')
    .replace(/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, '<time>')
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b/gi, '<hex>')
    .replace(/\b\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h)\b/g, '<dur>')
    .replace(/\b\d+(?:\.\d+)? ?(?:secs?|seconds?|mins?|minutes?|hours?|milliseconds?)\b/gi, '<dur>')
    .replace(/\b(pid|PID|Pid)([ =:#]*)\d+\b/g, '$1$2<pid>');
  return out
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

// sha256 over class, normalized evidence, base commit and contract digest.
export function failureFingerprint(
  f: Pick<AttemptFailure, 'class' | 'evidence' | 'baseCommit' | 'contractDigest'> & Partial<AttemptFailure>,
  ownPaths: readonly string[],
  opts: { tmpDir?: string } = {},
): string {
  return sha256Hex(
    canonicalJson({
      class: f.class,
      evidence: normalizeEvidence(f.evidence, ownPaths, opts),
      baseCommit: f.baseCommit,
      contractDigest: f.contractDigest,
    }),
  );
}

/** A classified failure: the class and the reason slug for journal and receipt. */
export interface Classified {
  class: FailureClass;
  reason: string;
}

/** What classifyCommand needs from settle's Execution. */
export interface CommandSettlement {
  reason: SettleReason;
  exitCode: number | null;
}

/**
 * Classifies the command's settlement together with what its output said; undefined means
 * the command succeeded. In order: interrupted; spawn_failed → environment; blocked (the
 * marker line or `blocked_exit`) → needs_human, whatever else happened. Otherwise a
 * command that exited 0 and whose agent reported no error succeeded — a rate limit the
 * agent got past is no failure. A failed command is: provider (limit seen by the
 * interpreter, or an exit code in `provider_exit_codes`) → timeout (timed_out, stalled) →
 * task: `agent_error` (the agent's own report, also with exit 0), `signaled`, `exited`.
 */
export function classifyCommand(
  execution: CommandSettlement,
  agent: Pick<AgentState, 'blocked' | 'providerLimited' | 'isError'> | undefined,
  task: { blockedExit?: number; repair: Pick<RepairCaps, 'providerExitCodes'> },
): Classified | undefined {
  const code = execution.exitCode;
  if (execution.reason === 'interrupted') return { class: 'interrupted', reason: 'interrupted' };
  if (execution.reason === 'spawn_failed') return { class: 'environment', reason: 'spawn_failed' };
  if (agent?.blocked !== undefined || (task.blockedExit !== undefined && code === task.blockedExit))
    return { class: 'needs_human', reason: 'blocked' };
  const failed = execution.reason !== 'exited' || code !== 0 || agent?.isError === true;
  if (!failed) return undefined;
  if (agent?.providerLimited || (code !== null && task.repair.providerExitCodes.includes(code)))
    return { class: 'provider', reason: 'provider_limited' };
  if (execution.reason === 'timed_out') return { class: 'timeout', reason: 'timed_out' };
  if (execution.reason === 'stalled') return { class: 'timeout', reason: 'stalled' };
  if (agent?.isError) return { class: 'task', reason: 'agent_error' };
  if (execution.reason === 'signaled') return { class: 'task', reason: 'signaled' };
  return { class: 'task', reason: 'exited' };
}

// A gate's (or an until verify's) settlement: undefined when it passed.
export function classifyGate(execution: CommandSettlement): Classified | undefined {
  switch (execution.reason) {
    case 'interrupted':
      return { class: 'interrupted', reason: 'interrupted' };
    case 'spawn_failed':
      return { class: 'environment', reason: 'spawn_failed' };
    case 'timed_out':
    case 'stalled':
      return { class: 'timeout', reason: execution.reason };
    case 'signaled':
      return { class: 'gate', reason: 'gate_failed' };
    case 'exited':
      return execution.exitCode === 0 ? undefined : { class: 'gate', reason: 'gate_failed' };
  }
}

/** What a retry's prompt says about the attempt before it. */
export interface PreviousFailure {
  class: FailureClass;
  reason: string;
  phase: string;
  attempt: number;
  /** Gate output tail / stderr tail; masked here again with `secrets`. */
  evidence: string;
}

export const EVIDENCE_LINES = 60;
export const EVIDENCE_BYTES = 8 * 1024;

/**
 * The retry's changed input: the task's prompt followed by a clearly delimited section with
 * the previous failure (class, reason, phase, evidence tail, secrets masked). Every
 * evidence line is indented behind `    | `, so nothing in it can pass for a line of the
 * prompt's own protocol (a `mock:` directive, a `RUNPLAN: BLOCKED` marker).
 */
export function retryPrompt(prompt: string | undefined, previous: PreviousFailure, mask: (text: string) => string = (t) => t): string {
  let tail = mask(previous.evidence)
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trimEnd());
  while (tail.length > 0 && tail[tail.length - 1] === '') tail.pop();
  tail = tail.slice(-EVIDENCE_LINES);
  let body = tail.map((l) => `    | ${l}`).join('\n');
  if (Buffer.byteLength(body) > EVIDENCE_BYTES)
    body = `    | …\n${Buffer.from(body)
      .subarray(-EVIDENCE_BYTES)
      .toString('utf8')
      .replace(/^[^\n]*\n/, '')}`;
  const section = [
    `----- runplan: attempt ${previous.attempt} of this task failed -----`,
    `class: ${previous.class}; reason: ${previous.reason}; phase: ${previous.phase}`,
    body === '' ? 'No output was captured.' : `Last lines of its output:\n${body}`,
    'Fix the cause of this failure; do not repeat the same approach unchanged.',
    '----- end of runplan failure report -----',
  ].join('\n');
  const base = prompt ?? '';
  return base === '' ? `${section}\n` : `${base.replace(/\n*$/, '')}\n\n${section}\n`;
}

/** One improve-verify round as the loop saw it. */
export interface RoundOutcome {
  /** 1-based. */
  round: number;
  /** The verify argv (`until`) exited 0. */
  verifyPassed: boolean;
  /** The round's command changed the tree (diff against the tree before the round). */
  treeChanged: boolean;
  /** failureFingerprint of this round's verify output (class `task`). */
  verifyFingerprint: string;
  /** The previous round's verify fingerprint, undefined on round 1. */
  previousVerifyFingerprint?: string;
}

export type RoundDecision =
  | { action: 'done' }
  | { action: 'next_round' }
  | { action: 'stop'; class: 'stagnation'; reason: 'no_change' | 'repeated_verify'; detail: string }
  | { action: 'stop'; class: 'task'; reason: 'rounds_exhausted'; detail: string };

/**
 * After each round of an `until` loop: green → done (gates follow); a round that changed
 * nothing, or whose verify failed exactly like the round before → stagnation (never
 * retried); the last allowed round still red → rounds_exhausted (class task, never retried).
 */
export function decideRound(outcome: RoundOutcome, rounds: number): RoundDecision {
  if (outcome.verifyPassed) return { action: 'done' };
  if (!outcome.treeChanged)
    return { action: 'stop', class: 'stagnation', reason: 'no_change', detail: `round ${outcome.round} changed nothing in the tree` };
  if (outcome.previousVerifyFingerprint === outcome.verifyFingerprint) {
    return {
      action: 'stop',
      class: 'stagnation',
      reason: 'repeated_verify',
      detail: `round ${outcome.round} failed verify exactly like round ${outcome.round - 1}`,
    };
  }
  if (outcome.round >= rounds)
    return {
      action: 'stop',
      class: 'task',
      reason: 'rounds_exhausted',
      detail: `verify still fails after ${outcome.round} of ${rounds} rounds`,
    };
  return { action: 'next_round' };
}

/**
 * The slug's stop-loss: spent tokens (input + output + cache read + cache creation) and
 * cost against `[budget]`. Undefined = within budget. Reaching the limit counts as spent:
 * a run may not start another attempt with nothing left.
 */
export function budgetExceeded(
  budget: Plan['budget'],
  spent: { usage: Usage; costUsd: number },
): { class: 'budget'; reason: 'max_tokens' | 'max_cost_usd'; detail: string } | undefined {
  const tokens = totalTokens(spent.usage);
  if (budget.maxTokens !== undefined && tokens >= budget.maxTokens) {
    return { class: 'budget', reason: 'max_tokens', detail: `${tokens} tokens spent, budget.max_tokens = ${budget.maxTokens}` };
  }
  if (budget.maxCostUsd !== undefined && spent.costUsd >= budget.maxCostUsd) {
    return {
      class: 'budget',
      reason: 'max_cost_usd',
      detail: `$${spent.costUsd.toFixed(4)} spent, budget.max_cost_usd = ${budget.maxCostUsd}`,
    };
  }
  return undefined;
}
