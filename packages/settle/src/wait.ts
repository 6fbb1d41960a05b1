import { longTimeout, type LongTimer } from '@runplan/common';

export const sleep = (ms: number) => new Promise<void>((resolve) => longTimeout(ms, resolve));

// Waits for a promise at most `ms` (any length); true when it settled in time. The timer never outlives the wait.
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: LongTimer | undefined;
  const timeout = new Promise<false>((resolve) => (timer = longTimeout(ms, () => resolve(false))));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    timer?.cancel();
  }
}
