import { findTagged, holdStallClocks, ownGroupOrphaned, readProcStat, restartStallClocks } from '@runplan/settle';
import { runTagPrefix } from './resume/leftovers.js';

// Ctrl-Z at a terminal (SIGTSTP to the job's process group) reaches runplan alone: each
// attempt runs in a session of its own, so without this runplan stopped and its attempts ran
// on unwatched. On SIGTSTP every process of the run (its ownerTag prefix) gets SIGSTOP, then
// runplan stops itself; the SIGCONT that resumes runplan (fg, bg) resumes what it stopped.
// In an orphaned process group the TSTP is ignored (see ownGroupOrphaned).
// Returns what stops listening.
export function stopWithTheJob(runId: () => string | undefined): () => void {
  let stopped: { pid: number; startTime: number }[] = [];
  const onStop = () => {
    // An orphaned group (setsid, cron, a shell gone): nothing would resume it; ignored, as the
    // kernel ignores a TSTP there for a process that does not handle it.
    if (ownGroupOrphaned()) return;
    holdStallClocks();
    const id = runId();
    if (id !== undefined) stopped = stopTagged(runTagPrefix(id));
    process.kill(process.pid, 'SIGSTOP');
  };
  const onContinue = () => {
    restartStallClocks();
    for (const p of stopped) if (readProcStat(p.pid)?.startTime === p.startTime) signal(p.pid, 'SIGCONT');
    stopped = [];
  };
  process.on('SIGTSTP', onStop);
  process.on('SIGCONT', onContinue);
  return () => {
    process.off('SIGTSTP', onStop);
    process.off('SIGCONT', onContinue);
  };
}

// SIGSTOP to every live process carrying the prefix, scanned again for what forked meanwhile.
function stopTagged(prefix: string): { pid: number; startTime: number }[] {
  const seen = new Map<number, { pid: number; startTime: number }>();
  for (let round = 0; round < 3; round++) {
    const found = findTagged({ prefixes: [prefix] }).filter((p) => !seen.has(p.pid));
    if (found.length === 0) break;
    for (const p of found) {
      seen.set(p.pid, p);
      signal(p.pid, 'SIGSTOP');
    }
  }
  return [...seen.values()];
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone
  }
}
