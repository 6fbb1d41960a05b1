// What a failure means and whether to try again: pure policy, no I/O (DESIGN "Failure classes and repair").
export { DEFAULT_CAPS } from '../plan/types.js';
export { FAILURE_CLASSES, type FailureClass } from '../events/types.js';
export { budgetExceeded } from './budget.js';
export { classifyCommand, classifyGate, type Classified, type CommandOutcome, type CommandSettlement } from './classify.js';
export {
  decideAfterCrash,
  decideRepair,
  emptyHistory,
  providerDelay,
  recordFailure,
  type RepairDecision,
  type RepairInput,
  type TaskHistory,
} from './decide.js';
export { failureFingerprint, normalizeEvidence, type FingerprintInput } from './fingerprint.js';
export { decideRound, type RoundDecision, type RoundOutcome } from './rounds.js';
export { EVIDENCE_BYTES, EVIDENCE_LINES, retryPrompt, type PreviousAttempt } from './retry-prompt.js';
export { CRASH_CAP, MAX_BACKOFF_MS, NEVER_RETRIED_REASONS, TRANSITIONS, type ChangedInput } from './transitions.js';
