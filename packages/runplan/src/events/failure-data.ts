import type { Classified } from './reasons.js';
import type { Phase } from './phase.js';

/**
 * The one failure shape, from the step that fails to the run's receipt: class and reason
 * (the class always the one REASON_CLASS gives the reason), the phase that failed, a message
 * for people, the evidence, and the facts that vary (`resetAtMs`, `detail`). Steps return it,
 * repair decides on it, the next prompt quotes it, run-failed is built from it.
 */
export type AttemptFailureData = Classified & FailureFacts;

/** What a failure says besides its class and reason. */
export interface FailureFacts {
  phase: Phase;
  message: string;
  /** Masked, bounded tail of the failing output (stderr / gate output): fingerprint input. */
  evidenceTail: string;
  /** provider: when the agent said its limit resets (epoch ms). */
  resetAtMs?: number;
  /** disk_full / io_error: the errno and the path the file system refused (null errno: the tool named none). */
  detail?: { errno: string | null; path: string };
}

/** The reason of a failure or a receipt: a failure reason, or repair's repeated_failure. */
export type ReceiptReason = AttemptFailureData['reason'];
