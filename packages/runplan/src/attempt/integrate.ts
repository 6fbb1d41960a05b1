import { join } from 'node:path';
import { err, ok } from '@runplan/common';
import type { TemplateVars } from '@runplan/workdir';
import { sha256Hex } from '../plan/digest.js';
import type { CheckpointData } from '../events/types.js';
import { writeEvidence } from '../host/evidence.js';
import { describeGitFailure, git, gitSettled, resolveCommit, succeeded, updateRef } from '../host/git.js';
import { fail, interruption, type StepResult, toolFault, writing } from './failure.js';
import { runGates } from './gates.js';
import type { Attempt } from './record.js';
import { keepJoinWarm } from './workspace.js';

// A checkpoint's id: sha256 over its key fields in a fixed order, so dependency ids chain
// every upstream checkpoint into each downstream one.
export function checkpointId(key: Omit<CheckpointData, 'id' | 'attempt'>): string {
  return sha256Hex(
    JSON.stringify([
      key.logicalRunId,
      key.planDigest,
      key.taskId,
      key.taskContractDigest,
      key.dependencyCheckpointIds,
      key.baseCommit,
      key.resultCommit,
    ]),
  );
}

/** What integrate puts on top of the integration head: the attempt's base and own commit. */
export interface Integrand {
  vars: TemplateVars;
  tree: string;
  attemptBase: string;
  /** The attempt's result commit; undefined: it changed nothing (expect = "none"). */
  own: string | undefined;
}

// Puts the result on top of the integration head (fast-forward, or rebase onto a head
// that moved and re-run the gates), then checkpoint → branch moved. Runs exclusively.
export async function integrate(a: Attempt, it: Integrand): Promise<StepResult<CheckpointData>> {
  keepJoinWarm();
  const { ctx, task } = a;
  const { attemptBase, own } = it;
  const onto = ctx.integration.head;
  let resultCommit: string;
  let mode: 'fast_forward' | 'rebase' | 'unchanged';
  if (own === undefined) {
    resultCommit = onto;
    mode = 'unchanged';
  } else if (onto === attemptBase) {
    resultCommit = own;
    mode = 'fast_forward';
  } else {
    mode = 'rebase';
    const rebased = await rebaseOnto(a, it, onto);
    if (!rebased.ok) return rebased;
    resultCommit = rebased.value;
  }
  await ctx.emit('integrated', { taskId: task.id, attempt: a.attempt, mode, attemptBase, onto, resultCommit });

  const key = {
    logicalRunId: ctx.runId,
    planDigest: ctx.planDigest,
    taskId: task.id,
    taskContractDigest: ctx.contractDigests.get(task.id) ?? '',
    dependencyCheckpointIds: task.needs.map((id) => ctx.checkpoints.get(id) ?? ''),
    baseCommit: onto,
    resultCommit,
  };
  const checkpoint: CheckpointData = { id: checkpointId(key), ...key, attempt: a.attempt };
  await ctx.emit('checkpoint', checkpoint);

  if (resultCommit !== onto) {
    const moved = await updateRef(ctx.repo, ctx.integration.branchRef, resultCommit, onto);
    if (!moved.ok) {
      const fault = toolFault(a, moved.error.message, ctx.repo);
      if (fault !== undefined) return err(fault);
      const message = `${ctx.integration.branchRef} is at ${moved.error.actual ?? 'nothing'}, expected ${onto}: someone else moved it`;
      return err(fail('branch_moved', 'integrate', message));
    }
    ctx.integration.head = resultCommit;
    await ctx.emit('branch-updated', {
      taskId: task.id,
      attempt: a.attempt,
      branch: ctx.integration.branchRef,
      from: onto,
      to: resultCommit,
    });
  }
  return ok(checkpoint);
}

// Rebases the attempt's commits onto a head that moved since it started and re-runs the
// gates there (phase integrate); returns the rebased result commit.
async function rebaseOnto(a: Attempt, it: Integrand, onto: string): Promise<StepResult<string>> {
  const { ctx } = a;
  const rebase = await gitSettled(it.tree, ['rebase', '--quiet', '--end-of-options', onto], a.git);
  if (!succeeded(rebase)) {
    await git(it.tree, ['rebase', '--abort']);
    const stopped = interruption(a, rebase.reason);
    if (stopped !== undefined) return err(stopped);
    const detail = describeGitFailure(['rebase', onto.slice(0, 12)], rebase);
    const path = join(a.evidenceDir, 'rebase.log');
    const fault = toolFault(a, rebase.stderr.toString('utf8'), it.tree);
    if (fault !== undefined) return err(fault);
    const written = await writing(a, path, () =>
      writeEvidence(
        path,
        `${detail}\n--- stdout\n${rebase.stdout.toString('utf8')}\n--- stderr\n${rebase.stderr.toString('utf8')}\n`,
        ctx.secrets,
      ),
    );
    if (!written.ok) return written;
    a.rec.evidence.push(path);
    if (rebase.reason === 'exited') {
      const output = rebase.stdout.toString('utf8') + rebase.stderr.toString('utf8');
      return err(fail('integration_conflict', 'integrate', `rebase onto ${onto.slice(0, 12)} conflicted: ${detail}`, output));
    }
    // A rebase that did not exit (killed, never started, stalled): the host's doing, not the task's.
    return err(fail(rebase.reason === 'timed_out' ? 'timed_out' : 'rebase_failed', 'integrate', detail));
  }
  const head = await resolveCommit(it.tree, 'HEAD');
  if (head === undefined) return err(fail('integration_conflict', 'integrate', 'no HEAD after rebase'));
  const gates = await runGates(a, { vars: it.vars, tree: it.tree, phase: 'integrate' });
  return gates !== undefined ? err(gates) : ok(head);
}
