import { readlinkSync } from 'node:fs';
import type { ChildOutputs } from './outputs.js';
import { within } from './teardown.js';
import type { ProcSource } from './types.js';

const pollMs = 100;

// Where fd N of a process points (its end of our stdout/stderr socket), read right after the spawn.
export function fdTarget(pid: number, fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return undefined;
  }
}

// Processes other than us that still hold the child's end of our pipes open.
export function pipeHolders(childEnds: readonly string[], proc: ProcSource): number[] {
  return proc.listPids().filter((pid) => pid !== process.pid && proc.readFdTargets(pid).some((t) => childEnds.includes(t)));
}

/**
 * The last read after the child and its tree are gone (or torn down): keep reading until
 * EOF while bytes keep coming (a slow consumer is not a held pipe), but give up after
 * `grace` without progress, or after `grace` at all when some process we could not end
 * still holds the pipe. Returns whether it gave up on a held pipe.
 */
export async function drainRest(outputs: ChildOutputs, holders: readonly number[], graceMs: number): Promise<boolean> {
  const start = Date.now();
  let seen = outputs.bytesSeen;
  let progressAt = start;
  while (!outputs.finished) {
    await within(outputs.done, pollMs);
    const now = Date.now();
    if (outputs.bytesSeen !== seen) {
      seen = outputs.bytesSeen;
      progressAt = now;
    }
    if (holders.length > 0 && now - start >= graceMs) return true;
    if (now - progressAt >= graceMs) return false;
  }
  return false;
}

