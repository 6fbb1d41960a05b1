// Public API of @runplan/common: the pieces every tool shares that are not about processes.
export { err, ok, unreachable } from './result.js';
export type { Result } from './result.js';
export { formatDuration, maxDurationMs, parseCommandLineDuration, parseDuration } from './duration.js';
export { longTimeout, maxTimerMs, sleepFor } from './timer.js';
export type { LongTimer } from './timer.js';
export {
  asTyped,
  dashLedValues,
  kebabSwitches,
  operandsAfterDashes,
  prepareArgv,
  repeatedValueOption,
  typedValue,
  typedValues,
  usageAsTyped,
} from './options.js';
export type { DeclaredOption } from './options.js';
export { isPlainObject } from './plain-object.js';
export { TailBuffer, textTail, utf8Tail } from './tail.js';
export { BreakableDestination } from './breakable.js';
export { packageVersion } from './version.js';
export { releaseHungUpTerminals } from './hung-up-terminal.js';
export { isStreamTarget } from './stream-target.js';
export { fsyncDirectory, fsyncFd, writeFileDurable } from './durable-write.js';
export type { DurableWriteOptions } from './durable-write.js';
