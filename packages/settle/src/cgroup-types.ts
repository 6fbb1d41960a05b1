// The types of cgroup ownership (cgroup.ts), shared with where cgroups are found (cgroup-place.ts).

/** What a caller asks for: a cgroup when one can be made (`auto`), always one, or never. */
export type OwnershipMode = 'auto' | 'cgroup' | 'group+tag';
/** What a call used: its own cgroup, or the process group plus the environment tag. */
export type OwnershipKind = 'cgroup' | 'group+tag';

/** Why no cgroup could be used; each is a snake_case slug with a message for people. */
export type CgroupUnavailableReason =
  | 'no_cgroup2'
  | 'cgroup_unknown'
  | 'cgroup_parent_invalid'
  | 'cgroup_unwritable'
  | 'no_cgroup_kill'
  | 'cgroup_join_failed';

export interface OwnershipFallback {
  reason: CgroupUnavailableReason;
  message: string;
}

/** A cgroup made for one child, and where settle itself lives (to return there after the spawn). */
export interface ChildCgroup {
  path: string;
  /** settle's own cgroup directory when the cgroup was made: where it moves back to after the spawn. */
  home: string;
}

/** Where one call's cgroup goes, and where settle itself lives now (to return there after the spawn). */
export interface CgroupPlace {
  parent: string;
  home: string;
}

/** Every cgroup settle makes is named `settle-[<ownerTag>-]<tag>`; tags never hold `-`. */
export const namePrefix = 'settle-';

export type Found<T> = { ok: true; value: T } | { ok: false; fallback: OwnershipFallback };
export const unavailable = (reason: CgroupUnavailableReason, message: string): { ok: false; fallback: OwnershipFallback } => ({
  ok: false,
  fallback: { reason, message },
});
