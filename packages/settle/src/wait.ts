import { longTimeout, type LongTimer } from '@runplan/common';

export const sleep = (ms: number) => new Promise<void>((resolve) => longTimeout(ms, resolve));

// True once a promise has settled, either way.
const settled = (promise: Promise<unknown>): Promise<true> =>
  promise.then(
    () => true,
    () => true,
  );

// Waits for a promise at most `ms` (any length); true when it settled in time. The timer never outlives the wait.
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: LongTimer | undefined;
  const timeout = new Promise<false>((resolve) => (timer = longTimeout(ms, () => resolve(false))));
  try {
    return await Promise.race([settled(promise), timeout]);
  } finally {
    timer?.cancel();
  }
}

// Waits for a promise until it settles or `signal` aborts; true when it settled first. No
// listener outlives the wait.
export async function unlessAborted(promise: Promise<unknown>, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal === undefined) return settled(promise);
  if (signal.aborted) return false;
  let onAbort = () => {};
  const aborted = new Promise<false>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([settled(promise), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
