// Public API of runplan: the coordinator as a library (the CLI is src/cli.ts).
export { runPlan } from './coordinator/run-plan.js';
export type { RunEnd, RunRequest, StartInfo } from './coordinator/types.js';
export { collectStatus, isStopHolder, liveCoordinator, STOP_ROLE } from './observe/status.js';
export { statusTable } from './observe/status-table.js';
export type { SlugState, SlugStatus, StatusOptions } from './observe/status.js';
export { stopSlug } from './observe/stop.js';
export type { CrashedRunStop, StopEnd, StopOptions } from './observe/stop.js';
export { findLeftovers, runTagPrefix } from './resume/leftovers.js';
export { checkpointId } from './attempt/integrate.js';
export { runAttempt } from './attempt/run-attempt.js';
export type { AttemptResult } from './attempt/run-attempt.js';
export {
  RUN_ID_PATTERN,
  compareRunStarts,
  headerStartOrder,
  listRunIds,
  listRuns,
  newRunId,
  runPaths,
  slugPaths,
  START_ORDER_FIELD,
  stateRootFor,
} from './host/state.js';
export type { RunPaths, RunStart, SlugPaths } from './host/state.js';
export type * from './events/types.js';
export { inspectRuns, readRun } from './resume/inspect.js';
export type { PriorKind, PriorRun, ReadRunOptions, RunRead } from './resume/inspect.js';
export { snapshotPath as foldSnapshotPath, writeSnapshot as writeFoldSnapshot } from './events/fold-snapshot.js';
export { snapshotSizes } from './coordinator/fold-snapshots.js';
export { loadPlanCached, planCachePath } from './plan/cache.js';
export type { CachedLoad } from './plan/cache.js';
export { recoverRun } from './resume/recover.js';
export type { RecoveredRun } from './resume/recover.js';
export type { Refusal } from './resume/refusal.js';
export type { OpenAttempt } from './events/view.js';
export { executorFor } from './executor/index.js';
export type {
  CommandEnd,
  CommandSpec,
  Executor,
  ExecutorHooks,
  ExecutorSpec,
  GateSpec,
  OwnedTeardown,
  OwnedWork,
} from './executor/index.js';
