import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { withTimeout } from './helpers.js';

/** Anything a test makes that must be undone whatever the test does. */
export interface Disposable {
  cleanup(): void | Promise<void>;
}

// A test body that owns its fixture: `make` sets it up, `body` uses it, cleanup always runs,
// and the whole is bounded by `timeoutMs` (uvu has no timeout of its own).
export function withCleanup<F extends Disposable>(
  timeoutMs: number,
  make: () => F,
  body: (fixture: F) => Promise<void>,
): () => Promise<void> {
  return withTimeout(timeoutMs, async () => {
    const fixture = make();
    try {
      await body(fixture);
    } finally {
      await fixture.cleanup();
    }
  });
}

export interface WaitOptions {
  /** Give up (throw) after this long. Default 60 s. */
  timeoutMs?: number;
  /** Look again this often. Default 50 ms. */
  everyMs?: number;
}

// Waits (bounded) until `check` returns something other than undefined/false, and returns it.
// For another process's state only — a file it writes, a pid it owns: there is no event to
// wait on there, so it is polled. Within one process, wait on the event itself.
export async function waitUntil<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= until) throw new Error(`waitUntil: ${what}: not within ${timeoutMs}ms`);
    await sleep(opts.everyMs ?? 50);
  }
}

// Waits (bounded) until some line of `file` satisfies `match`.
export async function waitForLine(file: string, match: (line: string) => boolean, timeoutMs = 60_000): Promise<void> {
  await waitUntil(`a matching line in ${file}`, () => existsSync(file) && readFileSync(file, 'utf8').split('\n').some(match), {
    timeoutMs,
  });
}

// Whether a pid names a live (non-zombie) process.
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

// SIGKILLs every pid that is still alive (what a killed coordinator left behind a test).
export function killAll(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}
