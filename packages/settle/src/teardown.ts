import { findOwned, stillSame, type OwnedProcess, type Ownership } from './owned.js';
import { procSource } from './procfs.js';
import { isOwnerTag } from './tag.js';
import type { ProcSource, SettleEvent, TeardownReport } from './types.js';
import { sleep } from './wait.js';

/** How long the final reap after KILL may take before the rest are reported as survivors. */
export const reapMs = 2000;
const pollMs = 50;

export interface TreeTeardown {
  ownership: Ownership;
  proc: ProcSource;
  signal: NodeJS.Signals;
  graceMs: number;
  onEvent?: (event: SettleEvent) => void;
  why: 'timed_out' | 'stalled' | 'interrupted' | 'leftovers';
  /** Resolves early when the caller cannot wait any longer (an interruption during grace). */
  hurry?: Promise<void>;
}

export const noTeardown = (): TeardownReport => ({ result: 'none', signalled: [], survivors: [], heldPipe: false });

/**
 * Ends everything an ownership covers: the first signal (and SIGCONT, so a stopped
 * process can act on it) to every owned process, re-scanning for new forks until all are
 * gone or `grace` passes; then KILL, re-scanning for up to `reapMs`. Each pid is signalled
 * only while its start time still matches what we found, so a reused pid is never hit.
 */
export async function endTree(t: TreeTeardown): Promise<TeardownReport> {
  const signalled = new Set<number>();
  const first = findOwned(t.ownership, t.proc);
  if (first.length === 0) return noTeardown();
  t.onEvent?.({ type: 'teardown-started', why: t.why, signal: t.signal });

  const hit = (owned: OwnedProcess[], signal: NodeJS.Signals, seen: Set<number>) => {
    for (const p of owned) {
      if (seen.has(p.pid) || !stillSame(p, t.proc)) continue;
      seen.add(p.pid);
      if (!send(p.pid, signal)) continue;
      if (signal !== 'SIGKILL' && signal !== 'SIGCONT') send(p.pid, 'SIGCONT');
      signalled.add(p.pid);
      t.onEvent?.({ type: 'signalled', pid: p.pid, signal });
    }
  };

  const termed = new Set<number>();
  hit(first, t.signal, termed);
  let hurried = false;
  void t.hurry?.then(() => (hurried = true));
  const graceEnds = Date.now() + t.graceMs;
  let left = first;
  while (left.length > 0 && Date.now() < graceEnds && !hurried) {
    await sleep(pollMs);
    left = findOwned(t.ownership, t.proc);
    hit(left, t.signal, termed);
  }
  const report = (result: TeardownReport['result'], survivors: number[]): TeardownReport => ({
    result,
    signalled: [...signalled].sort((a, b) => a - b),
    survivors,
    heldPipe: false,
  });
  left = findOwned(t.ownership, t.proc);
  if (left.length === 0) return report(signalled.size > 0 ? 'clean' : 'none', []);

  const reapEnds = Date.now() + reapMs;
  for (;;) {
    hit(left, 'SIGKILL', new Set());
    await sleep(pollMs);
    left = findOwned(t.ownership, t.proc);
    if (left.length === 0) return report('escalated', []);
    if (Date.now() >= reapEnds) break;
  }
  const survivors = left.map((p) => p.pid).sort((a, b) => a - b);
  return report('failed', survivors);
}

// kill(2) that reports whether the signal was delivered instead of throwing.
function send(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

export interface TeardownByTagOptions {
  /** How long the tree may take to exit after TERM before KILL. Default 5000. */
  graceMs?: number;
  /** First signal. Default SIGTERM. */
  signal?: NodeJS.Signals;
  onEvent?: (event: SettleEvent) => void;
  /** Injected /proc reader (tests). */
  proc?: Partial<ProcSource>;
}

/**
 * Ends every live process carrying a tag, wherever it is in the process tree — how a
 * restarted coordinator ends what a crashed predecessor's attempt left running.
 */
export async function teardownByTag(tag: string, opts: TeardownByTagOptions = {}): Promise<TeardownReport> {
  if (!isOwnerTag(tag)) throw new TypeError(`teardownByTag: not an owner tag: ${JSON.stringify(tag)}`);
  return endTree({
    ownership: { tags: [tag] },
    proc: procSource(opts.proc),
    signal: opts.signal ?? 'SIGTERM',
    graceMs: opts.graceMs ?? 5000,
    why: 'leftovers',
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
  });
}
