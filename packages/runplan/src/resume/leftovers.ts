import { findTagged, isOwnerTag, newOwnerTag, teardownTagged, type ProcSource, type TagQuery, type TeardownReport } from '@runplan/settle';

/**
 * A logical run's processes, found by their ownerTags. Every tag a run makes (one per
 * attempt, one for landing) starts with a prefix derived from the run id alone
 * (`20261129T075500Z-4f2a9c01` → `r20261129T075500Z_4f2a9c01_`; 32 random bits, so runs of any
 * slug started in the same second do not share it), so what a crashed coordinator
 * left running can be found even when its journal cannot be read. A resumed run keeps its
 * id, so the prefix also covers every earlier coordinator's attempts of it. Tags journaled
 * by runplan versions before the prefix are matched exactly, when the journal can be read.
 */

// The ownerTag prefix of a logical run: `r` + the run id with its `-` as `_`, then `_`.
export function runTagPrefix(runId: string): string {
  return `r${runId.replace(/[^A-Za-z0-9]/g, '_')}_`;
}

// A fresh ownerTag for one of the run's attempts (or its landing).
export function newRunOwnerTag(runId: string): string {
  return newOwnerTag(runTagPrefix(runId));
}

// What to look for: the run's prefix, plus the journaled tags (those of older journals
// carry no prefix; a tag that is not tag-shaped names nothing settle could have started).
function leftoverQuery(runId: string, journaledTags: readonly string[]): TagQuery {
  return { prefixes: [runTagPrefix(runId)], tags: [...new Set(journaledTags)].filter(isOwnerTag) };
}

export interface LeftoverOptions {
  /** Injected /proc reader (tests). */
  proc?: Partial<ProcSource>;
  /** Where the run's cgroups may be besides our own cgroup's directory (journaled attempt-started `cgroupParent`s). */
  cgroupParents?: readonly string[];
}

// The pids of the run's live processes, sorted; read-only. Only meaningful while no
// coordinator of the run is alive (a live one's attempts carry the same prefix).
export function findLeftovers(runId: string, journaledTags: readonly string[], opts: LeftoverOptions = {}): number[] {
  return findTagged(leftoverQuery(runId, journaledTags), {
    ...(opts.proc ? { proc: opts.proc } : {}),
    ...(opts.cgroupParents ? { cgroupParents: opts.cgroupParents } : {}),
  })
    .map((p) => p.pid)
    .sort((a, b) => a - b);
}

// Where a run's open attempts' cgroups are (their journaled attempt-started `cgroupParent`s).
export function journaledCgroupParents(open: Iterable<{ cgroupParent: string | null }>): string[] {
  return [...new Set([...open].map((a) => a.cgroupParent).filter((p) => p !== null))];
}

// Ends the run's live processes: TERM, `graceMs`, KILL, each pid verified by its start time
// before it is signalled. Call it only holding the slug lock (no coordinator of the run alive).
export function endLeftovers(
  runId: string,
  journaledTags: readonly string[],
  graceMs: number,
  opts: LeftoverOptions = {},
): Promise<TeardownReport> {
  return teardownTagged(leftoverQuery(runId, journaledTags), {
    graceMs,
    ...(opts.proc ? { proc: opts.proc } : {}),
    ...(opts.cgroupParents ? { cgroupParents: opts.cgroupParents } : {}),
  });
}
