export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// Waits for a promise at most `ms`; true when it settled in time. The timer never outlives the wait.
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
