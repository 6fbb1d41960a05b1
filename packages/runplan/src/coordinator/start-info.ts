import type { RunPaths } from '../host/state.js';
import type { Plan } from '../plan/types.js';
import type { RunView } from '../events/view.js';
import type { Start } from '../resume/choose.js';
import type { RunRequest, StartInfo } from './types.js';

// What the coordinator tells RunRequest.onStart once the run's journal is open.
export function startInfo(plan: Plan, run: RunPaths, start: Start, view: RunView): StartInfo {
  return {
    runId: run.runId,
    journal: run.journal,
    slug: plan.slug,
    tasks: plan.tasks.map((t) => t.id),
    postRun: (plan.hooks.postRun ?? []).length > 0,
    preRun: (plan.hooks.preRun ?? []).length > 0,
    budget: plan.budget,
    rounds: Object.fromEntries(plan.tasks.filter((t) => t.until !== undefined).map((t) => [t.id, t.rounds])),
    resumed: start.mode === 'resume',
    view,
  };
}

// Tells the observer, before the first record (awaited, so it can read the journal's earlier
// records first); what it throws is ignored: an observer never changes the run.
export async function announceStart(req: RunRequest, info: StartInfo): Promise<void> {
  try {
    await req.onStart?.(info);
  } catch {
    // An observer's failure is its own.
  }
}
