// The data of the events an attempt's improve-verify loop journals (see events/types.ts).
import type { LoopReason } from './reasons.js';

/** One round of an improve-verify loop. */
export interface RoundDoneData {
  taskId: string;
  attempt: number;
  round: number;
  verifyPassed: boolean;
  verifyFingerprint: string;
  action: 'done' | 'next_round' | 'stop';
  reason: LoopReason | null;
  evidence: string;
  /**
   * The round's tree made durable: a commit (parent: the attempt's base) on this side ref,
   * so a loop resumed after a crash continues from it. Null when git refused; absent in
   * journals written before rounds were kept.
   */
  roundRef?: string | null;
  roundCommit?: string | null;
}

/**
 * A loop resumed after a crash tried the crashed attempt's last durable round (`from`) on its
 * new base: `applied` (it continues from the round after it), or the loop starts over from
 * the base and the lost rounds do not count — the ref is gone or moved (`ref_missing`), or
 * its change does not apply on the new base (`conflict`).
 */
export interface RoundRestoredData {
  taskId: string;
  attempt: number;
  from: DurableRound;
  restored: boolean;
  reason: 'applied' | 'ref_missing' | 'conflict';
  message: string;
}

/** The last durable round of a crashed attempt's loop: where a resumed loop continues from. */
export interface DurableRound {
  attempt: number;
  round: number;
  ref: string;
  commit: string;
}
