import {
  cgroupName,
  cgroupPopulated,
  makeChildCgroup,
  primeJoin,
  removeCgroup,
  spawnInside,
  type ChildCgroup,
  type OwnershipFallback,
  type OwnershipMode,
} from './cgroup.js';
import { cgroupPlace } from './cgroup-place.js';
import { sleep } from './wait.js';

/**
 * How one call owns its child, decided before the spawn:
 *
 *   mode group+tag ──────────────────────────────────────────▶ group+tag
 *   mode auto|cgroup ─ parent found, cgroup made ─ joined ───▶ cgroup
 *                          │ no                      │ no
 *                          ▼                         ▼
 *                 auto: group+tag + fallback (why)   cgroup: refused (settle exits 125)
 */
export type OwnershipChoice =
  | { kind: 'cgroup'; cgroup: ChildCgroup }
  | { kind: 'group+tag'; fallback?: OwnershipFallback }
  | { kind: 'refused'; fallback: OwnershipFallback };

export const ownershipModes: readonly OwnershipMode[] = ['auto', 'cgroup', 'group+tag'];

// Whether a value is an ownership mode a caller may ask for.
export function isOwnershipMode(value: unknown): value is OwnershipMode {
  return typeof value === 'string' && (ownershipModes as readonly string[]).includes(value);
}

// Decides the ownership of one call and makes its cgroup when it gets one.
export function chooseOwnership(mode: OwnershipMode, n: { parent?: string; tag: string; ownerTag?: string }): OwnershipChoice {
  if (mode === 'group+tag') return { kind: 'group+tag' };
  const place = cgroupPlace(n.parent);
  const made = place.ok ? makeChildCgroup(place.value, cgroupName(n.tag, n.ownerTag)) : place;
  if (made.ok) return { kind: 'cgroup', cgroup: made.value };
  return unavailableAs(mode, made.fallback);
}

/**
 * Warms the kernel's cgroup move lock for the joins of the spawns to come, off the main thread
 * (cgroup.ts, `primeJoin`): a caller that knows a spawn is a few milliseconds away calls this
 * before the work that comes first. Nothing happens where no cgroup could be used, or under
 * `group+tag`.
 */
export function primeCgroupJoin(options: { ownership?: OwnershipMode; cgroupParent?: string } = {}): void {
  if (options.ownership === 'group+tag') return;
  const place = cgroupPlace(options.cgroupParent);
  if (place.ok) primeJoin(place.value.home);
}

// What a cgroup that cannot be used means in a mode: a refusal when it was required.
function unavailableAs(mode: OwnershipMode, fallback: OwnershipFallback): OwnershipChoice {
  return mode === 'cgroup' ? { kind: 'refused', fallback } : { kind: 'group+tag', fallback };
}

/**
 * The spawn under a choice: inside the cgroup when there is one. Joining can still fail
 * (a cgroup that refuses processes); then the cgroup is removed and the choice falls back
 * (or is refused) as if it could not be made. A spawn that throws throws through.
 */
export function spawnOwned<T>(
  mode: OwnershipMode,
  choice: OwnershipChoice,
  spawn: () => T,
): { refused: OwnershipFallback } | { choice: Exclude<OwnershipChoice, { kind: 'refused' }>; spawned: T } {
  if (choice.kind === 'refused') return { refused: choice.fallback };
  if (choice.kind === 'group+tag') return { choice, spawned: spawn() };
  let joined: ReturnType<typeof spawnInside<T>>;
  try {
    joined = spawnInside(choice.cgroup, spawn);
  } catch (cause) {
    removeCgroup(choice.cgroup.path);
    throw cause;
  }
  if (!joined.ok) {
    removeCgroup(choice.cgroup.path);
    if (mode === 'cgroup') return { refused: joined.fallback };
    return { choice: { kind: 'group+tag', fallback: joined.fallback }, spawned: spawn() };
  }
  if (joined.value.home) return { choice, spawned: joined.value.spawned };
  // settle could not leave: the cgroup holds settle too, so it is never killed nor removed.
  const fallback: OwnershipFallback = {
    reason: 'cgroup_join_failed',
    message: `settle could not move back out of ${choice.cgroup.path}; the child is owned by its group and tag`,
  };
  return { choice: { kind: 'group+tag', fallback }, spawned: joined.value.spawned };
}

/** How long a cgroup whose last process is exiting may take to read `populated 0` before it is left in place. */
const emptyingMs = 1000;

// Removes a call's cgroup once its processes are gone (short, bounded polls): false when it stays.
// The usual cgroup is already empty: removing it is the check (rmdir refuses a populated one).
export async function releaseCgroup(cgroup: ChildCgroup): Promise<boolean> {
  if (removeCgroup(cgroup.path)) return true;
  const giveUpAt = Date.now() + emptyingMs;
  for (let ms = 1; cgroupPopulated(cgroup.path) && Date.now() < giveUpAt; ms = Math.min(ms * 2, 50)) await sleep(ms);
  return !cgroupPopulated(cgroup.path) && removeCgroup(cgroup.path);
}
