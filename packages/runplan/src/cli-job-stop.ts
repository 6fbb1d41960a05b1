import { continueStopped, holdStallClocks, ownGroupOrphaned, restartStallClocks, type StoppedProcess, stopTagged } from '@runplan/settle';
import { runTagPrefix } from './resume/leftovers.js';

// Ctrl-Z at a terminal (SIGTSTP to the job's process group) reaches runplan alone: each
// attempt runs in a session of its own, so without this runplan stopped and its attempts ran
// on unwatched. On SIGTSTP every process of the run (its ownerTag prefix) gets SIGSTOP, then
// runplan stops itself; the SIGCONT that resumes runplan (fg, bg) resumes what it stopped.
// In an orphaned process group the TSTP is ignored (see ownGroupOrphaned).
// Returns what stops listening.
export function stopWithTheJob(runId: () => string | undefined): () => void {
  let stopped: StoppedProcess[] = [];
  const onStop = () => {
    // An orphaned group (setsid, cron, a shell gone): nothing would resume it; ignored, as the
    // kernel ignores a TSTP there for a process that does not handle it.
    if (ownGroupOrphaned()) return;
    holdStallClocks();
    const id = runId();
    if (id !== undefined) stopped = stopTagged({ prefixes: [runTagPrefix(id)] });
    process.kill(process.pid, 'SIGSTOP');
  };
  const onContinue = () => {
    restartStallClocks();
    continueStopped(stopped);
    stopped = [];
  };
  process.on('SIGTSTP', onStop);
  process.on('SIGCONT', onContinue);
  return () => {
    process.off('SIGTSTP', onStop);
    process.off('SIGCONT', onContinue);
  };
}
