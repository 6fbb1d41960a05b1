import { longTimeout, type LongTimer } from '@runplan/common';
import { isSignalName } from './spec-check.js';
import type { SettleEvent, SettleSpec } from './types.js';

/** Why settle ends a child that has not exited: its deadline, a stall, an interruption, or the consumer. */
export type Termination = 'timed_out' | 'stalled' | 'interrupted' | 'finished';

// The stall clocks of every call still running, for holdStallClocks / restartStallClocks.
const running = new Set<Requests>();

/**
 * Ctrl-Z (SIGTSTP) stops the commands with the process that runs them (settle's, run-hook's
 * and runplan's CLIs): a stopped command writes nothing, and is not stalled for it. Their
 * stall clocks are held before the stop, and started over by restartStallClocks when the
 * SIGCONT comes (a whole stall period from then). Held first, never merely refreshed on the
 * SIGCONT: on waking, the event loop runs its expired timers before any signal handler.
 * Deadlines keep counting, as GNU timeout's does.
 */
export function holdStallClocks(): void {
  for (const r of running) r.holdStall();
}

/** See {@link holdStallClocks}. */
export function restartStallClocks(): void {
  for (const r of running) r.restartStall();
}

/**
 * Who asked for the child's end. The first requester wins and outranks how the child then
 * dies; after the child exited only an interruption still counts (it cuts the drain short),
 * and once the call settled nothing does.
 */
export class Requests {
  requested: Termination | undefined;
  /** For `interrupted`: the signal the AbortSignal's reason named, if any. */
  interruptSignal: NodeJS.Signals | undefined;
  /** Resolves at the first request. */
  readonly termination: Promise<void>;
  private wake: () => void = () => {};
  private settled = false;
  private readonly deadline: LongTimer | undefined;
  private stall: LongTimer | undefined;
  private stallHeld = false;
  private readonly onAbort = () => {
    this.interruptSignal = signalOf(this.spec.signal?.reason);
    this.emit({ type: 'interrupt' });
    this.request('interrupted');
  };
  private readonly onFinish = () => this.request('finished');

  constructor(
    private readonly spec: SettleSpec,
    private readonly emit: (event: SettleEvent) => void,
    /** Whether the child's exit was seen. */
    private readonly exitSeen: () => boolean,
  ) {
    this.termination = new Promise<void>((resolve) => (this.wake = resolve));
    const deadlineMs = spec.deadlineMs || undefined; // 0 means none, as on the CLI
    this.deadline =
      deadlineMs !== undefined
        ? longTimeout(deadlineMs, () => {
            emit({ type: 'deadline', deadlineMs });
            this.request('timed_out');
          })
        : undefined;
    this.stall = this.armStall();
    running.add(this);
    spec.signal?.addEventListener('abort', this.onAbort, { once: true });
    // The consumer ending the child (spec.finish): torn down as at a deadline, settled as it died.
    if (spec.finish?.aborted) this.onFinish();
    else spec.finish?.addEventListener('abort', this.onFinish, { once: true });
  }

  request(why: Termination): void {
    if (this.requested || this.settled) return;
    if (why !== 'interrupted' && this.exitSeen()) return;
    this.requested = why;
    this.wake();
  }

  private armStall(): LongTimer | undefined {
    const stallMs = this.spec.stallMs || undefined;
    return stallMs !== undefined
      ? longTimeout(stallMs, () => {
          this.emit({ type: 'stall', stallMs });
          this.request('stalled');
        })
      : undefined;
  }

  holdStall(): void {
    if (this.stall === undefined || this.stallHeld) return;
    this.stall.cancel();
    this.stallHeld = true;
  }

  restartStall(): void {
    if (!this.stallHeld) return;
    this.stallHeld = false;
    this.stall = this.armStall();
  }

  // Output arrived: the stall timer starts over.
  sawOutput(): void {
    this.stall?.refresh();
  }

  // The child exited or is being ended: its timers have nothing left to do.
  stopTimers(): void {
    this.deadline?.cancel();
    this.stall?.cancel();
    this.stall = undefined;
    running.delete(this);
  }

  // The call settled: later requests are ignored and the caller's signals are let go.
  close(): void {
    this.settled = true;
    running.delete(this);
    this.spec.signal?.removeEventListener('abort', this.onAbort);
    this.spec.finish?.removeEventListener('abort', this.onFinish);
  }
}

// The signal an AbortSignal's reason names (`'SIGTERM'` or `{signal: 'SIGTERM'}`), if any.
export function signalOf(reason: unknown): NodeJS.Signals | undefined {
  const name = typeof reason === 'string' ? reason : (reason as { signal?: unknown } | null)?.signal;
  return isSignalName(name) ? name : undefined;
}
