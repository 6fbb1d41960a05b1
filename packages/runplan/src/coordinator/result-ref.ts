import { git } from '../host/git.js';

// A rerun resets runplan/<slug> to its base: without `land` an earlier result would survive
// only in the reflog. Each complete run's result stays reachable under
// refs/runplan/<slug>/runs/<run-id>, written before run-complete.
export async function keepResult(repo: string, slug: string, runId: string, resultCommit: string): Promise<boolean> {
  const kept = await git(repo, ['update-ref', `refs/runplan/${slug}/runs/${runId}`, resultCommit]);
  return kept.code === 0;
}
