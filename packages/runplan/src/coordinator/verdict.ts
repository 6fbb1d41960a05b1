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

// Under keep-going the receipt lists every task that stopped for good (also when a stop of
// the whole run, a budget or an interruption, is the run's failure); its first stop, if no
// stop of the whole run came, is the run's failure.
// The tasks downstream of those stops that were never dispatched are named with them.
function withKeptGoing(failure: StopCause | undefined, end: ScheduleEnd): StopCause | undefined {
  const { keptGoing } = end;
  if (failure === undefined || keptGoing.length === 0) return failure;
  const all = failure === keptGoing[0] || failure.task === null ? keptGoing : [...keptGoing, failure];
  const failed = all.map((s) => ({ task: s.task!, class: s.failure.class, reason: s.failure.reason, phase: s.failure.phase }));
  return { ...failure, failed, notDispatched: end.notDispatched };
}

// The order of these checks is the precedence of the run's ends: a journal failure, then a
// disk failure, then an interruption, then the failure that stopped dispatching, then tasks
// that never became ready, then processes that survived a checkpointed attempt.
export function verdict(end: ScheduleEnd, known: VerdictInputs): Verdict {
  const { waiting, survivors, keptGoing } = end;
  const failure = withKeptGoing(end.failure ?? keptGoing[0], end);
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
    // A task that had failed on its own before the signal keeps its own class and reason:
    // the receipt names it as the first failure, never as interrupted.
    const own =
      failure?.task != null && f !== undefined && f.class !== 'interrupted'
        ? { task: failure.task, class: f.class, reason: f.reason, phase: f.phase }
        : undefined;
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
        ...(failure?.failed !== undefined ? { failed: failure.failed } : {}),
        ...(failure?.notDispatched !== undefined ? { notDispatched: failure.notDispatched } : {}),
        ...(own !== undefined ? { firstFailure: own } : {}),
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
