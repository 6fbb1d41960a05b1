import type { RunStartedData } from '../events/types.js';
import type { Start } from '../resume/choose.js';
import { coordinatorIdentity } from './identity.js';
import type { RunParts } from './parts.js';

// run-started's data for a clean start or a continuation: the plan, where the run lives,
// its base and branch, this coordinator, and what a continuation carries over.
export function runStarted(
  parts: RunParts,
  at: { start: Exclude<Start, { mode: 'resume' }>; baseCommit: string; allowBackground?: boolean; resetBudget?: boolean },
): RunStartedData {
  const { plan, run, slug, repo, planDigest, integration, workdirTemplate } = parts.ctx;
  const { start } = at;
  return {
    logicalRunId: run.runId,
    slug: plan.slug,
    planFile: plan.file,
    planCopy: run.planCopy,
    planDigest,
    ...parts.tasks,
    repo,
    stateDir: slug.stateRoot,
    base: plan.base,
    baseCommit: at.baseCommit,
    branch: integration.branchRef,
    jobs: parts.jobs,
    land: plan.land ?? null,
    workdir: workdirTemplate,
    coordinator: coordinatorIdentity(),
    abandoned: start.abandoned,
    continues: start.mode === 'continue' ? start.origin : null,
    usageCarried: start.carried.usage,
    costCarried: start.carried.costUsd,
    ...(at.resetBudget === true ? { budgetReset: true as const } : {}),
    ...(at.allowBackground === true ? { allowBackground: true as const } : {}),
  };
}
