import type { Plan } from '../plan/types.js';
import { slugPaths, stateRootFor } from '../host/state.js';
import { inspectRuns } from './inspect.js';
import type { Refusal } from './refusal.js';

// The plan's base names no commit (a deleted branch, a typo): refused, never guessed. When
// the slug has a run a `run` would resume or continue, the hint names it and the commit it
// started from — `base = "<commit>"` takes it up from there. Read-only (no lock, as status).
export async function baseMissing(plan: Plan, at: { repo: string; common: string; stateDir: string | undefined }): Promise<Refusal> {
  const message = `base "${plan.base}" of ${plan.file} names no commit in ${at.repo}`;
  const generic = `point base in ${plan.file} at a branch, tag or commit that exists (git branch --list)`;
  const prior = await inspectRuns(slugPaths(stateRootFor(at.common, at.stateDir), plan.slug));
  const open = prior.filter((p) => p.journal.started !== undefined && (p.kind === 'incomplete' || p.kind === 'failed')).at(-1);
  const started = open?.journal.started;
  if (open === undefined || started === undefined || prior.at(-1) !== open) return { reason: 'base_missing', message, hint: generic };
  const what = open.kind === 'incomplete' ? 'incomplete' : 'failed';
  return {
    reason: 'base_missing',
    message: `${message}; ${what} run ${open.paths.runId} of slug ${plan.slug} started from ${started.baseCommit}`,
    hint: `to take it up from there set base = "${started.baseCommit}" in ${plan.file}; or ${generic}`,
  };
}
