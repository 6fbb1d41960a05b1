import type { ClassifiedAs, LoopReason } from '../events/reasons.js';

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

export type RoundDecision = { action: 'done' } | { action: 'next_round' } | ({ action: 'stop'; detail: string } & ClassifiedAs<LoopReason>);

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
