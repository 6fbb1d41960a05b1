import { cgroupParentDir, type SettleSpec } from '@runplan/settle';
import type { Plan } from '../plan/types.js';

/** How settle owns every process of one attempt; journaled in attempt-started. */
export interface AttemptOwnership {
  /** The plan's `ownership` (default `auto`). */
  mode: NonNullable<Plan['ownership']>;
  /**
   * The cgroup v2 directory every settle call of the attempt makes its cgroup in: the plan's
   * `cgroup_parent`, else the coordinator's own cgroup's directory; null when the mode is
   * group+tag or there is no cgroup v2 directory (settle then falls back, or refuses).
   */
  cgroupParent: string | null;
}

// Resolves the attempt's ownership once, so every call of the attempt uses one parent and a
// resumed coordinator finds their cgroups there (whatever its own cgroup is by then).
export function attemptOwnership(plan: Pick<Plan, 'ownership' | 'cgroupParent'>): AttemptOwnership {
  const mode = plan.ownership ?? 'auto';
  if (mode === 'group+tag') return { mode, cgroupParent: null };
  if (plan.cgroupParent !== undefined) return { mode, cgroupParent: plan.cgroupParent };
  const own = cgroupParentDir(undefined);
  return { mode, cgroupParent: own.ok ? own.value : null };
}

// The settle options of one call of the attempt.
export function settleOwnership(o: AttemptOwnership): Pick<SettleSpec, 'ownership' | 'cgroupParent'> {
  return { ownership: o.mode, ...(o.cgroupParent !== null ? { cgroupParent: o.cgroupParent } : {}) };
}
