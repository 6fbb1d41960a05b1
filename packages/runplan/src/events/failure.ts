import { classified, type FailureReason } from './reasons.js';
import type { AttemptFailureData, Phase } from './types.js';

// A failure of a reason, with the class the table gives it.
export function failureOf(reason: FailureReason, phase: Phase, message: string, evidenceTail = ''): AttemptFailureData {
  return { ...classified(reason), phase, message, evidenceTail };
}
