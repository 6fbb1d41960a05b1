import { dirname, resolve } from 'node:path';
import { missingExecutorTools } from '../executor/tools.js';
import { baseMissing } from '../resume/base-missing.js';
import { commonDir, resolveCommit, toplevel } from '../host/git.js';
import { notADirectory } from '../host/dir-check.js';
import { stateRootFor } from '../host/state.js';
import { loadPlanCached } from '../plan/cache.js';
import type { Plan } from '../plan/types.js';
import type { RunEnd, RunRequest } from './types.js';

/** The plan, its repository and git dir, and what its base resolves to now: `run` and `run --dry-run` start here. */
export interface Located {
  plan: Plan;
  repo: string;
  common: string;
  baseCommit: string;
  /** Keeps the plan in the plan cache: `run` calls it once it holds the slug lock (dry-run never). */
  savePlan: () => void;
}

// Loads the plan (from the plan cache when it holds it) and finds its repository and base
// commit: an invalid plan, no repository or a base that names no commit ends here (of the
// state only the plan cache is read; nothing is written).
export async function locate(req: Pick<RunRequest, 'planFile' | 'repo' | 'stateDir'>): Promise<Located | RunEnd> {
  // Which repository (and its git dir) does not depend on what the plan says, only on where
  // it is (plan.dir is the plan file's directory): git is asked while the plan loads, and
  // the answers are read in the same order as before, after the plan is known to be valid.
  const repoAt = req.repo ?? dirname(resolve(req.planFile));
  const asked = toplevel(repoAt).then(async (repo) => ({ repo, common: repo === undefined ? undefined : await commonDir(repo) }));
  const { loaded, save } = await loadPlanCached(
    req.planFile,
    asked.then(({ common }) => (common === undefined ? undefined : stateRootFor(common, req.stateDir))),
  );
  if (!loaded.ok) {
    await asked;
    return { kind: 'invalid_plan', file: req.planFile, problems: loaded.error };
  }
  const plan = loaded.value;
  const { repo, common } = await asked;
  if (repo === undefined) {
    const at = req.repo ?? plan.dir;
    return {
      kind: 'refused',
      reason: 'not_a_repository',
      message: (await notADirectory(at)) ?? `${at} is not inside a git work tree`,
      hint: req.repo === undefined ? 'pass --repo DIR' : 'give --repo a directory of a git repository',
    };
  }
  if (common === undefined) return { kind: 'refused', reason: 'not_a_repository', message: `no git dir for ${repo}` };
  const baseCommit = await resolveCommit(repo, plan.base);
  if (baseCommit === undefined) return { kind: 'refused', ...(await baseMissing(plan, { repo, common, stateDir: req.stateDir })) };
  const missing = missingExecutorTools(plan);
  if (missing.length > 0) {
    return {
      kind: 'refused',
      reason: 'executor_unavailable',
      message: `${plan.file} runs tasks on Slurm, but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not on PATH`,
      hint: 'install the Slurm client tools (Debian: slurm-client) or run the tasks locally ([executor] kind = "local")',
    };
  }
  return { plan, repo, common, baseCommit, savePlan: save };
}
