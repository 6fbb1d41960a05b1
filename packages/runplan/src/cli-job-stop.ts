import { continueStopped, relayJobStop, stopTagged } from '@runplan/settle';
import { runTagPrefix } from './resume/leftovers.js';

// Ctrl-Z at a terminal (SIGTSTP to the job's process group) reaches runplan alone: each
// attempt runs in a session of its own, so without this runplan stopped and its attempts ran
// on unwatched. On SIGTSTP every process of the run (its ownerTag prefix) gets SIGSTOP, then
// runplan stops itself; the SIGCONT that resumes runplan (fg, bg) resumes what it stopped.
// In an orphaned process group the TSTP is ignored (settle's relayJobStop). Returns what
// stops listening.
export function stopWithTheJob(runId: () => string | undefined): () => void {
  return relayJobStop(() => {
    const id = runId();
    const stopped = id !== undefined ? stopTagged({ prefixes: [runTagPrefix(id)] }) : [];
    return () => continueStopped(stopped);
  });
}
