export { bootId, isAlive, parseProcStat, processIdentity, readProcStat } from './identity.js';
export type { ProcessIdentity, ProcStat } from './identity.js';
// Re-exported from @runplan/common (they moved there: they are not about processes), so
// settle's documented API is unchanged.
export { err, formatDuration, longTimeout, maxTimerMs, ok, parseDuration, sleepFor, unreachable } from '@runplan/common';
export type { LongTimer, Result } from '@runplan/common';
export { capture, defaultMaxBuffer } from './capture.js';
export { stream } from './stream.js';
export type { Streamed } from './stream.js';
export { findTagged, teardownByTag, teardownTagged } from './teardown-tagged.js';
export type { FindTaggedOptions, TagQuery, TeardownByTagOptions } from './teardown-tagged.js';
export type { OwnedProcess } from './owned.js';
export { isOwnerTag, newOwnerTag, tagVariable } from './tag.js';
export { exitCodeFor } from './exit-code.js';
export { listenForSignals } from './cli-signals.js';
export { continueStopped, relayJobStop, stopTagged } from './job-control.js';
export type { StoppedProcess } from './job-control.js';
export type { SignalListeners } from './cli-signals.js';
export { realProc } from './procfs.js';
export { ownCgroupDir, cgroupParentDir } from './cgroup-place.js';
export { primeCgroupJoin } from './ownership-choice.js';
export type { CgroupUnavailableReason, OwnershipFallback, OwnershipKind, OwnershipMode } from './cgroup.js';
export type {
  Captured,
  Consumer,
  Execution,
  PipeHolders,
  ProcSource,
  SettleEvent,
  SettleInput,
  SettleReason,
  SettleSpec,
  StderrPolicy,
  TeardownReport,
  TransportError,
  TransportErrorSource,
} from './types.js';
