import { processIdentity, type ProcessIdentity } from '@runplan/settle';

// This coordinator process as the journal names it (run-started, a take-over, the journal-failed note).
export function coordinatorIdentity(): ProcessIdentity {
  return processIdentity(process.pid) ?? { pid: process.pid, startTime: 0, bootId: 'unknown', host: 'unknown' };
}
