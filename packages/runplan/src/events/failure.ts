import { classified, type FailureReason } from './reasons.js';
import type { AttemptFailureData, FailureFacts, Phase } from './types.js';

// A failure of a reason, with the class the table gives it.
export function failureOf(reason: FailureReason, phase: Phase, message: string, evidenceTail = ''): AttemptFailureData {
  return { ...classified(reason), phase, message, evidenceTail };
}

// The same, with the facts that vary (resetAtMs, detail) added.
export function failureWith(reason: FailureReason, facts: FailureFacts): AttemptFailureData {
  return { ...classified(reason), ...facts };
}
