import type { AttemptStartedData } from './attempt-events.js';
import type { OpenAttempt } from './view-types.js';

// What the run view keeps of an attempt-started until the attempt closes; a field older
// journals lack reads as none.
export function openAttemptOf(d: AttemptStartedData): OpenAttempt {
  return {
    taskId: d.taskId,
    attempt: d.attempt,
    ownerTag: String(d.ownerTag),
    // Journals written before cgroup ownership carry none.
    cgroupParent: typeof d.cgroupParent === 'string' ? d.cgroupParent : null,
    evidenceDir: String(d.evidenceDir),
    // Journals written before attempt dirs were rendered up front carry no worktree.
    worktree: typeof d.worktree === 'string' ? d.worktree : '',
    settled: false,
    settledRounds: [],
    ...(d.executor === 'slurm' ? { executor: 'slurm' as const } : {}),
  };
}

// A command-settled of an open attempt: its usage is counted — per loop round when it names one.
export function markSettled(open: OpenAttempt | undefined, round: number | undefined): void {
  if (open === undefined) return;
  if (typeof round === 'number') open.settledRounds.push(round);
  else open.settled = true;
}
