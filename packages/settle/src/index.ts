export { bootId, isAlive, parseProcStat, processIdentity, readProcStat } from './identity.js';
export type { ProcessIdentity, ProcStat } from './identity.js';
