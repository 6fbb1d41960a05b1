// Public API of runplan: the coordinator as a library (the CLI is src/cli.ts).
export { runPlan } from './run.js';
export type { RunEnd, RunRequest } from './run.js';
export { collectStatus, isStopHolder, liveCoordinator, STOP_ROLE, statusTable } from './status.js';
export type { SlugState, SlugStatus, StatusOptions } from './status.js';
export { stopSlug } from './stop.js';
export type { CrashedRunStop, StopEnd, StopOptions } from './stop.js';
export { findLeftovers, runTagPrefix } from './leftovers.js';
export { checkpointId, runAttempt } from './attempt.js';
export type { AttemptResult } from './attempt.js';
export { RUN_ID_PATTERN, compareRunStarts, headerStartOrder, listRunIds, listRuns, newRunId, runPaths, slugPaths, START_ORDER_FIELD, stateRootFor } from './state.js';
export type { RunPaths, RunStart, SlugPaths } from './state.js';
export type * from './events.js';
export { inspectRuns, recoverRun } from './resume.js';
export type { OpenAttempt, PriorKind, PriorRun, RecoveredRun, Refusal } from './resume.js';
