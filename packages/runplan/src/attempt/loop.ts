import { join } from 'node:path';
import type { Execution } from '@runplan/settle';
import { renderArgv, type TemplateVars } from '@runplan/workdir';
import { maskSecrets } from '../plan/secrets.js';
import { failureFingerprint } from '../repair/fingerprint.js';
import { decideRound } from '../repair/rounds.js';
import { budgetExceeded } from '../repair/budget.js';
import { addUsage } from '../events/types.js';
import { textTail, writeEvidence } from '../host/evidence.js';
import { runCommand, type CommandRun } from './command.js';
import { fail, interruption, writing } from './failure.js';
import { check } from './gates.js';
import type { Attempt } from './record.js';
import { keepRound, restoreRound } from './round-refs.js';
import { treeState } from './workspace.js';

// Quotes output lines so nothing in them reads as a line of the prompt's own protocol.
function quote(text: string): string {
  return text
    .replace(/\n+$/, '')
    .split('\n')
    .map((l) => `    | ${l}`)
    .join('\n');
}

// The slug's [budget] is the stop-loss between rounds too: no further round once the slug's
// spend, with what this attempt's rounds spent so far (not yet in the ledger), reached it.
function spentBudget(a: Attempt) {
  const slug = a.ctx.spent();
  return budgetExceeded(a.ctx.plan.budget, { usage: addUsage(slug.usage, a.rec.usage), costUsd: slug.costUsd + a.rec.costUsd });
}

// An improve-verify loop: the command in rounds on the same worktree, each round's prompt
// carrying the previous verify output, until the `until` argv exits 0. A round that
// changes nothing, returns to a tree already verified, or fails verify the same way
// `stagnation_rounds` rounds running is stagnation; the last round still red is
// rounds_exhausted; a round is not started once the slug's budget is spent (class budget).
// Each round's tree is kept on a side ref named in its round-done, so a
// loop resumed after a crash continues from the last kept round (hooks run once per
// attempt, not per round).
export async function runLoop(
  a: Attempt,
  at: { vars: TemplateVars; tree: string; prompt: string; baseCommit: string },
): Promise<CommandRun> {
  const { ctx, task } = a;
  const { vars, tree, prompt, baseCommit } = at;
  const until = renderArgv(task.until ?? [], vars, 'pre_run');
  if (!until.ok) return { execution: undefined, failure: fail('template_refused', 'command', until.error.message) };
  // After a crash: continue from the last durable round's tree; rounds whose work was lost
  // (no durable round, or it no longer applies on this base) do not count. Journaled either way.
  const durable = ctx.durableRounds.get(task.id);
  let restored = false;
  if (durable !== undefined && durable.attempt < a.attempt) {
    const tried = await restoreRound(a, tree, durable);
    await ctx.emit('round-restored', { taskId: task.id, attempt: a.attempt, ...tried });
    restored = tried.restored;
  }
  const first = (restored && durable !== undefined ? durable.round : 0) + 1;
  let previousFingerprint: string | undefined;
  let sameVerifyRounds = 0;
  const verifiedTrees = new Set<string>();
  let verifyTail = '';
  let last: Execution | undefined;
  for (let round = first; round <= task.rounds; round++) {
    const spent = round > first ? spentBudget(a) : undefined;
    if (spent !== undefined) return { execution: last, failure: fail(spent.reason, 'command', `before round ${round}: ${spent.detail}`) };
    const before = await treeState(tree);
    const roundPrompt =
      round === first || verifyTail === ''
        ? prompt
        : `${prompt.replace(/\n*$/, '\n')}\n----- runplan: verify after round ${round - 1} failed -----\n${quote(maskSecrets(verifyTail, ctx.secrets))}\n----- end of verify output -----\n`;
    const command = await runCommand(a, { vars, tree, prompt: roundPrompt, round });
    last = command.execution;
    if (command.failure !== undefined) return command;
    const verify = await check(a, until.value, tree);
    const output = `${verify.stdout.toString('utf8')}${verify.stderr.toString('utf8')}`;
    const path = join(a.evidenceDir, `verify.round-${round}.log`);
    const written = await writing(a, path, () =>
      writeEvidence(path, `$ ${until.value.join(' ')}\n# ${verify.reason} exit=${verify.exitCode}\n${output}`, ctx.secrets),
    );
    if (!written.ok) return { execution: last, failure: written.error };
    a.rec.evidence.push(path);
    const stopped = interruption(a, verify.reason);
    if (stopped !== undefined) return { execution: last, failure: stopped };
    const verifyPassed = verify.reason === 'exited' && verify.exitCode === 0;
    verifyTail = textTail(output, 4096);
    const verifyFingerprint = failureFingerprint(
      {
        class: 'task',
        evidenceTail: maskSecrets(verifyTail, ctx.secrets),
        baseCommit,
        contractDigest: ctx.contractDigests.get(task.id) ?? '',
      },
      [a.evidenceDir, tree],
    );
    const after = await treeState(tree);
    sameVerifyRounds = verifyFingerprint === previousFingerprint ? sameVerifyRounds + 1 : 1;
    const decision = decideRound(
      { round, verifyPassed, treeChanged: after !== before, treeSeen: verifiedTrees.has(after), sameVerifyRounds },
      { rounds: task.rounds, stagnationRounds: task.stagnationRounds },
    );
    verifiedTrees.add(after);
    const kept = await keepRound(a, { worktree: tree, tree: after, baseCommit, round });
    if (!kept.ok) await ctx.emit('ref-failed', kept.failure);
    await ctx.emit('round-done', {
      taskId: task.id,
      attempt: a.attempt,
      round,
      verifyPassed,
      verifyFingerprint,
      action: decision.action,
      reason: decision.action === 'stop' ? decision.reason : null,
      evidence: path,
      roundRef: kept.ok ? kept.ref : null,
      roundCommit: kept.ok ? kept.commit : null,
    });
    if (decision.action === 'done') return { execution: last };
    if (decision.action === 'stop')
      return {
        execution: last,
        failure: fail(decision.reason, 'command', decision.detail, maskSecrets(verifyTail, ctx.secrets)),
      };
    previousFingerprint = verifyFingerprint;
  }
  return {
    execution: last,
    failure: fail('rounds_exhausted', 'command', `no rounds left of ${task.rounds}`, maskSecrets(verifyTail, ctx.secrets)),
  };
}
