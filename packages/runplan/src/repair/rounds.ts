import type { ClassifiedAs, LoopReason } from '../events/reasons.js';

/** One improve-verify round as the loop saw it. */
export interface RoundOutcome {
  /** 1-based. */
  round: number;
  /** The verify argv (`until`) exited 0. */
  verifyPassed: boolean;
  /** The round's command changed the tree (diff against the tree before the round). */
  treeChanged: boolean;
  /** The tree after this round equals one an earlier round of the attempt already verified. */
  treeSeen: boolean;
  /**
   * Rounds running, this one included, whose verify failed with this round's fingerprint:
   * 1 when it differs from the round before. A coarse verify (one line, or none) repeats
   * while the tree advances, so one repeat alone is not stagnation.
   */
  sameVerifyRounds: number;
}

/** What a loop may spend: `rounds` in all, `stagnationRounds` of one verify failure running. */
export interface RoundLimits {
  rounds: number;
  stagnationRounds: number;
}

export type RoundDecision = { action: 'done' } | { action: 'next_round' } | ({ action: 'stop'; detail: string } & ClassifiedAs<LoopReason>);

/**
 * After each round of an `until` loop: green → done (gates follow). Stagnation (never
 * retried): a round that changed nothing (no_change), a tree an earlier round already
 * verified (tree_cycle), the same verify failure `stagnationRounds` rounds running
 * (repeated_verify). The last allowed round still red → rounds_exhausted (class task,
 * never retried).
 */
export function decideRound(outcome: RoundOutcome, limits: RoundLimits): RoundDecision {
  const { round } = outcome;
  if (outcome.verifyPassed) return { action: 'done' };
  if (!outcome.treeChanged)
    return { action: 'stop', class: 'stagnation', reason: 'no_change', detail: `round ${round} changed nothing in the tree` };
  if (outcome.treeSeen)
    return {
      action: 'stop',
      class: 'stagnation',
      reason: 'tree_cycle',
      detail: `round ${round} left a tree an earlier round of this attempt already verified`,
    };
  if (outcome.sameVerifyRounds >= limits.stagnationRounds) {
    return {
      action: 'stop',
      class: 'stagnation',
      reason: 'repeated_verify',
      detail: `verify failed the same way in ${outcome.sameVerifyRounds} rounds running (rounds ${round - outcome.sameVerifyRounds + 1}–${round})`,
    };
  }
  if (round >= limits.rounds)
    return {
      action: 'stop',
      class: 'task',
      reason: 'rounds_exhausted',
      detail: `verify still fails after ${round} of ${limits.rounds} rounds`,
    };
  return { action: 'next_round' };
}
