import type { RunEvent } from './read.js';
import type { AttemptClosedData } from './types.js';

/** Where one task stands, as its records say: what the live table of `runplan run` draws. */
export interface TaskStep {
  /** The attempt it is on (0: none started, or its checkpoint adopted). */
  attempt: number;
  /** The last step record of that attempt, or checkpoint-adopted; undefined: still waiting. */
  step:
    | 'attempt-started'
    | 'pre-run-done'
    | 'command-settled'
    | 'gates-done'
    | 'post-run-done'
    | 'integrated'
    | 'checkpoint'
    | 'attempt-closed'
    | 'checkpoint-adopted'
    | undefined;
  /** gates-done: after the command (`gates`) or again after a rebase (`integrate`). */
  gatesPhase?: 'gates' | 'integrate';
  /** attempt-closed: how the attempt ended (`class` `interrupted`: the run's interruption stopped it). */
  closed?: { outcome: AttemptClosedData['outcome']; reason: string; class?: AttemptClosedData['class'] };
  /** provider-wait after the closed attempt: the next one waits for the provider until then (ISO). */
  providerWait?: { until: string; reason: string };
  /** When the attempt started and closed (record ts). */
  startedTs?: string;
  closedTs?: string;
  /** A loop attempt's last round-done: the round it finished and what came next (the table shows `round N/M`). */
  round?: { done: number; action: 'done' | 'next_round' | 'stop' };
}

// Where a task stands after one more record of it (a record that is no step only names it).
export function nextStep(task: TaskStep | undefined, e: RunEvent): TaskStep {
  const t: TaskStep = task ?? { attempt: 0, step: undefined };
  switch (e.type) {
    case 'attempt-started':
      return { attempt: e.data.attempt, step: e.type, startedTs: e.ts };
    case 'checkpoint-adopted':
      return { attempt: 0, step: e.type };
    case 'gates-done':
      return { ...t, step: e.type, gatesPhase: e.data.phase };
    case 'attempt-closed':
      return { ...t, step: e.type, closed: { outcome: e.data.outcome, reason: e.data.reason, class: e.data.class }, closedTs: e.ts };
    case 'round-done':
      return { ...t, round: { done: e.data.round, action: e.data.action } };
    case 'provider-wait':
      return { ...t, providerWait: { until: e.data.until, reason: e.data.reason } };
    case 'pre-run-done':
    case 'command-settled':
    case 'post-run-done':
    case 'integrated':
    case 'checkpoint':
      return { ...t, step: e.type };
    default:
      return t;
  }
}
