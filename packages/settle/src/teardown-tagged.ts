import { removeCgroup } from './cgroup.js';
import { cgroupParentDir } from './cgroup-place.js';
import { cgroupsTagged } from './cgroup-tags.js';
import { findOwned, type OwnedProcess, type Ownership } from './owned.js';
import { procSource } from './procfs.js';
import { isOwnerTag } from './tag.js';
import { endTree } from './teardown.js';
import type { ProcSource, SettleEvent, TeardownReport } from './types.js';

// Finding and ending processes by their tag, wherever they are (a crashed coordinator's
// leftovers): the query's tags and prefixes, and the cgroups settle named for them.

export interface TeardownByTagOptions {
  /** How long the tree may take to exit after TERM before KILL. Default 5000. */
  graceMs?: number;
  /** First signal. Default SIGTERM. */
  signal?: NodeJS.Signals;
  onEvent?: (event: SettleEvent) => void;
  /** Injected /proc reader (tests). */
  proc?: Partial<ProcSource>;
  /**
   * Directories where settle calls made cgroups (`cgroupParent`, or a journaled one): their
   * cgroups named for the tag are ended too, whatever their processes' environment says.
   * Our own cgroup's directory is always searched.
   */
  cgroupParents?: readonly string[];
}

/** Which tagged processes a caller means: those carrying one of `tags`, or any tag that starts with one of `prefixes`. */
export interface TagQuery {
  tags?: readonly string[];
  prefixes?: readonly string[];
}

export interface FindTaggedOptions {
  /** Injected /proc reader (tests). */
  proc?: Partial<ProcSource>;
  /** As in TeardownByTagOptions: where to look for the tag's cgroups besides our own cgroup's directory. */
  cgroupParents?: readonly string[];
}

// The ownership a query stands for: its tags, and the cgroups settle made for them under the
// given parents and our own cgroup's directory. A tag or prefix that is not tag-shaped is a caller's bug.
function queryOwnership(query: TagQuery, caller: string, cgroupParents: readonly string[] = []): Ownership {
  for (const tag of [...(query.tags ?? []), ...(query.prefixes ?? [])]) {
    if (!isOwnerTag(tag)) throw new TypeError(`${caller}: not an owner tag or tag prefix: ${JSON.stringify(tag)}`);
  }
  const tags = query.tags ?? [];
  const tagPrefixes = query.prefixes ?? [];
  const own = cgroupParentDir(undefined);
  const parents = [...cgroupParents, ...(own.ok ? [own.value] : [])];
  const cgroups = cgroupsTagged({ tags, prefixes: tagPrefixes }, parents);
  return { tags, tagPrefixes, ...(cgroups.length > 0 ? { cgroups } : {}) };
}

/**
 * Every live process (not a zombie, not ourselves) whose environment carries a tag the
 * query names, with its start time: one walk of /proc, read-only. How `runplan status`
 * sees a crashed run's leftovers before anyone ends them.
 */
export function findTagged(query: TagQuery, opts: FindTaggedOptions = {}): OwnedProcess[] {
  return findOwned(queryOwnership(query, 'findTagged', opts.cgroupParents), procSource(opts.proc));
}

/**
 * Ends every live process carrying a tag, wherever it is in the process tree, and every
 * process in a cgroup settle made for the tag (found in `cgroupParents` and our own cgroup's
 * directory) — how a restarted coordinator ends what a crashed predecessor's attempt left running.
 */
export async function teardownByTag(tag: string, opts: TeardownByTagOptions = {}): Promise<TeardownReport> {
  if (!isOwnerTag(tag)) throw new TypeError(`teardownByTag: not an owner tag: ${JSON.stringify(tag)}`);
  return teardownTagged({ tags: [tag] }, opts);
}

/**
 * teardownByTag for a query: every live process carrying one of the tags or a tag with one
 * of the prefixes (a prefix finds every attempt of a run even when no tag of it can be read
 * back from a journal). TERM, grace, KILL, reap as teardownByTag; each pid is signalled only
 * while its start time still matches, and nothing is touched that neither carries such a tag
 * nor is in a cgroup settle named for one (those get cgroup.kill, and are removed once empty).
 */
export async function teardownTagged(query: TagQuery, opts: TeardownByTagOptions = {}): Promise<TeardownReport> {
  const ownership = queryOwnership(query, 'teardownTagged', opts.cgroupParents);
  const report = await endTree({
    ownership,
    proc: procSource(opts.proc),
    signal: opts.signal ?? 'SIGTERM',
    graceMs: opts.graceMs ?? 5000,
    why: 'leftovers',
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
  });
  // A cgroup is removed once empty; one that stays populated is the teardown's survivors.
  for (const cgroup of ownership.cgroups ?? []) removeCgroup(cgroup);
  return report;
}
