import type { RefFailedData } from '../events/types.js';
import { git } from '../host/git.js';
import { runPaths, type SlugPaths } from '../host/state.js';
import { readRun } from '../resume/inspect.js';

// A rerun resets runplan/<slug> to its base: without `land` an earlier result would survive
// only in the reflog. Each complete run's result stays reachable under
// refs/runplan/<slug>/runs/<run-id>, written before run-complete (a land_moved failure keeps
// its result there too, until a later run of the slug completes). Returns the failure when
// git would not write it.
export async function keepResult(repo: string, slug: string, runId: string, resultCommit: string): Promise<RefFailedData | undefined> {
  const ref = `refs/runplan/${slug}/runs/${runId}`;
  const kept = await git(repo, ['update-ref', ref, resultCommit]);
  if (kept.code === 0) return undefined;
  return { op: 'write', ref, commit: resultCommit, taskId: null, message: kept.stderr.trim() || `git update-ref exited ${kept.code}` };
}

// When a run completes, the results failed runs of the slug kept (land_moved) are superseded:
// their refs are deleted. Only a run whose journal reads back with a run-failed receipt
// loses its ref; a complete run's (or one whose journal cannot be read) stays. Returns the
// refs git would not delete.
export async function pruneFailedResults(repo: string, slug: SlugPaths, runId: string): Promise<RefFailedData[]> {
  const prefix = `refs/runplan/${slug.slug}/runs/`;
  const listed = await git(repo, ['for-each-ref', '--format=%(refname)', prefix]);
  if (listed.code !== 0) return [];
  const failures: RefFailedData[] = [];
  for (const ref of listed.stdout.split('\n')) {
    const id = ref.slice(prefix.length);
    if (ref === '' || id === runId || id.includes('/')) continue;
    const { view } = await readRun(runPaths(slug, id).journal);
    if (view.terminal?.type !== 'run-failed') continue;
    const deleted = await git(repo, ['update-ref', '-d', ref]);
    if (deleted.code !== 0) failures.push({ op: 'delete', ref, commit: null, taskId: null, message: deleted.stderr.trim() });
  }
  return failures;
}
