import type { AttemptFailureData } from '../events/types.js';
import { diskFailure, diskFaultInText } from '../host/disk.js';
import { readRef, updateRef } from '../host/git.js';
import type { RunParts } from './parts.js';

// Points the integration branch at the integration head — the base commit, or the last
// valid checkpoint's result on a resume: the branch is a projection of the journal.
export async function resetBranch(parts: RunParts): Promise<AttemptFailureData | undefined> {
  const { repo, integration } = parts.ctx;
  const ref = integration.branchRef;
  const head = integration.head;
  const old = (await readRef(repo, ref)) ?? null;
  if (old !== head) {
    const moved = await updateRef(repo, ref, head, old);
    const fault = moved.ok ? undefined : diskFaultInText(moved.error.message, repo);
    if (fault !== undefined) {
      parts.journal.diskFailed(fault);
      return diskFailure(fault, 'run');
    }
    if (!moved.ok)
      return {
        class: 'integration',
        reason: 'branch_moved',
        phase: 'run',
        message: `${ref} moved while starting: ${moved.error.message}`,
        evidenceTail: '',
      };
  }
  await parts.ctx.emit('branch-updated', { taskId: null, attempt: null, branch: ref, from: old, to: head });
  return undefined;
}
