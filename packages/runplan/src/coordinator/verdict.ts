import { diskFailure, isDiskReason, type DiskFault } from '../host/disk.js';
import type { ScheduleEnd } from './scheduler.js';
import type { StopCause } from './types.js';

/** How the run ends once dispatching stopped: no receipt (exit 5), a failure receipt, or landing then success. */
export type Verdict = { kind: 'journal_failed' } | { kind: 'failed'; stop: StopCause } | { kind: 'land' };

/** What the run knows besides the scheduler's answer. */
export interface VerdictInputs {
  /** The journal refused a write. */
  journalFailed: boolean;
  /** The first write the file system refused. */
  diskFault: DiskFault | undefined;
  /** The operator's signal, when the run was interrupted (its reason is the signal name). */
  interrupted: { reason: unknown } | undefined;
}

// The order of these checks is the precedence of the run's ends: a journal failure, then a
// disk failure, then an interruption, then the failure that stopped dispatching, then tasks
// that never became ready, then processes that survived a checkpointed attempt.
export function verdict(end: ScheduleEnd, known: VerdictInputs): Verdict {
  const { failure, waiting, survivors } = end;
  if (known.journalFailed) return { kind: 'journal_failed' };
  if (known.diskFault !== undefined) {
    const disk =
      failure !== undefined && isDiskReason(failure.failure.reason)
        ? failure
        : { failure: diskFailure(known.diskFault, 'run'), task: null, evidence: [] };
    return { kind: 'failed', stop: disk };
  }
  if (known.interrupted !== undefined) {
    const f = failure?.failure;
    return {
      kind: 'failed',
      stop: {
        failure: {
          class: 'interrupted',
          reason: 'interrupted',
          phase: f?.phase ?? 'run',
          message: `interrupted by ${String(known.interrupted.reason)}`,
          evidenceTail: '',
        },
        task: failure?.task ?? null,
        evidence: failure?.evidence ?? [],
      },
    };
  }
  if (failure !== undefined) return { kind: 'failed', stop: failure };
  if (waiting.length > 0) {
    return {
      kind: 'failed',
      stop: {
        failure: {
          class: 'engine',
          reason: 'unschedulable',
          phase: 'run',
          message: `tasks never became ready: ${waiting.join(', ')}`,
          evidenceTail: '',
        },
        task: null,
        evidence: [],
      },
    };
  }
  if (survivors !== undefined) {
    return {
      kind: 'failed',
      stop: {
        failure: {
          class: 'teardown',
          reason: 'teardown_failed',
          phase: 'command',
          message: `task ${survivors.task} is checkpointed but its processes survived teardown: ${survivors.pids.join(' ')}`,
          evidenceTail: '',
        },
        task: survivors.task,
        evidence: [],
      },
    };
  }
  return { kind: 'land' };
}
