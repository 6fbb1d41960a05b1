export { bootId, isAlive, parseProcStat, processIdentity, readProcStat } from './identity.js';
export type { ProcessIdentity, ProcStat } from './identity.js';
export { err, ok, unreachable } from './result.js';
export type { Result } from './result.js';
export { formatDuration, parseDuration } from './duration.js';
