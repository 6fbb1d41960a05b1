/** The longest delay one setTimeout honours; past it Node fires after 1 ms (with a warning). */
export const maxTimerMs = 2 ** 31 - 1;

/** A pending {@link longTimeout}. */
export interface LongTimer {
  /** Stops it; it never fires after this. */
  cancel(): void;
  /** Starts the whole wait again from now (a stall timer on new output); nothing once fired or cancelled. */
  refresh(): void;
}

/**
 * Calls `fire` after `ms`, however long: a wait past {@link maxTimerMs} is a chain of
 * setTimeouts of at most that much each (so 700h does not fire at once). Each link fires
 * no earlier than asked, so the whole never fires early. `maxChunkMs` is for tests.
 */
export function longTimeout(ms: number, fire: () => void, maxChunkMs = maxTimerMs): LongTimer {
  let timer: NodeJS.Timeout | undefined;
  let chunk = 0;
  let left = 0; // what is still to wait after the current link
  const arm = (wait: number) => {
    chunk = Math.min(wait, maxChunkMs);
    left = wait - chunk;
    timer = setTimeout(step, chunk);
  };
  const step = () => {
    if (left > 0) return arm(left);
    timer = undefined;
    fire();
  };
  arm(ms);
  return {
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
    refresh() {
      if (timer === undefined) return;
      // The cheap path (called on every chunk of output): the first link again, re-armed in place.
      if (chunk === Math.min(ms, maxChunkMs)) {
        timer.refresh();
        left = ms - chunk;
        return;
      }
      clearTimeout(timer);
      arm(ms);
    },
  };
}

// Waits `ms`, however long; resolves true when the time is up, false at once if `signal`
// aborts first (it never rejects). The awaitable form of longTimeout.
export function sleepFor(ms: number, signal?: AbortSignal, maxChunkMs = maxTimerMs): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const onAbort = () => {
      timer.cancel();
      resolve(false);
    };
    const timer = longTimeout(
      ms,
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      },
      maxChunkMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
