import { join } from 'node:path';
import { exitCodeFor, type Execution } from '@runplan/settle';
import { afterPostRun, afterPreRun, runHook, type HookOutcome, type RunOutcome } from '@runplan/run-hook';
import type { TemplateVars } from '@runplan/workdir';
import { err, ok } from '@runplan/common';
import type { AttemptFailureData, HookDoneData } from '../events/types.js';
import { writeEvidence } from '../host/evidence.js';
import { fail, type StepResult, writing } from './failure.js';
import { settleOwnership } from './ownership.js';
import type { Attempt } from './record.js';

// pre_run before the command: anything but success stops the attempt, nothing is exec'd.
export async function preRun(a: Attempt, vars: TemplateVars, tree: string): Promise<AttemptFailureData | undefined> {
  const argv = a.ctx.plan.hooks.preRun;
  if (argv === undefined || argv.length === 0) return undefined;
  const ran = await runTier(a, { tier: 'pre_run', argv, vars, tree });
  if (!ran.ok) return ran.error;
  const hook = ran.value;
  const decision = afterPreRun(hook);
  await a.ctx.emit('pre-run-done', hookData(a, hook, join(a.evidenceDir, 'pre_run.log')));
  if (decision.proceed) return undefined;
  if (decision.outcome === 'interrupted') return fail('interrupted', 'pre_run', 'the run was interrupted during pre_run');
  return fail('pre_run_failed', 'pre_run', `pre_run ${hook.reason}: ${hook.ok ? '' : hook.message}`, hook.stderrTail);
}

// post_run after the command and gates (whenever pre_run succeeded): it may demote, never promote.
export async function postRun(
  a: Attempt,
  at: { vars: TemplateVars; tree: string },
  execution: Execution | undefined,
  primary: AttemptFailureData | undefined,
): Promise<AttemptFailureData | undefined> {
  const argv = a.ctx.plan.hooks.postRun;
  if (argv === undefined || argv.length === 0) return primary;
  // An interruption, a disk fault (it aborts the run) or the engine's own failure ends the attempt at once.
  if (primary?.class === 'interrupted' || primary?.reason === 'internal_error' || a.ctx.signal.aborted)
    return primary ?? fail('interrupted', 'post_run', 'the run was interrupted');
  const run: { outcome: RunOutcome; reason: string } =
    primary === undefined
      ? { outcome: 'success', reason: 'ok' }
      : { outcome: primary.class === 'timeout' ? 'timed_out' : 'failed', reason: primary.reason };
  const exitCode = execution !== undefined ? exitCodeFor(execution) : 1;
  const vars = { ...at.vars, 'run.outcome': run.outcome, 'run.exit_code': exitCode };
  const ran = await runTier(a, { tier: 'post_run', argv, vars, tree: at.tree });
  if (!ran.ok) return ran.error;
  const hook = ran.value;
  const after = afterPostRun(run, hook);
  await a.ctx.emit('post-run-done', { ...hookData(a, hook, join(a.evidenceDir, 'post_run.log')), demoted: after.demoted });
  // A hook that could not be started judged nothing: the host's doing (class environment,
  // never retried), not a demotion that would send the agent round again.
  if (after.demoted && hook.reason === 'spawn_failed')
    return fail('spawn_failed', 'post_run', `post_run hook could not be started: ${hook.ok ? '' : hook.message}`, hook.stderrTail);
  if (after.demoted) return fail('post_run_failed', 'post_run', `post_run ${hook.reason}: ${hook.ok ? '' : hook.message}`, hook.stderrTail);
  if (hook.reason === 'interrupted' && primary === undefined)
    return fail('interrupted', 'post_run', 'the run was interrupted during post_run');
  return primary;
}

// Runs one hook tier through run-hook in the worktree, owned by the attempt; its output is evidence.
// A hook past hooks.timeout gets the task's `grace` between TERM and KILL, as its command does.
async function runTier(
  a: Attempt,
  h: { tier: 'pre_run' | 'post_run'; argv: readonly string[]; vars: TemplateVars; tree: string },
): Promise<StepResult<HookOutcome>> {
  const hook = await runHook(h.argv, {
    tier: h.tier,
    vars: h.vars,
    cwd: h.tree,
    timeoutMs: a.ctx.plan.hooks.timeoutMs,
    graceMs: a.task.graceMs,
    baseEnv: process.env,
    signal: a.ctx.signal,
    ownerTag: a.ownerTag,
    ...settleOwnership(a.ownership),
  });
  const path = join(a.evidenceDir, `${h.tier}.log`);
  const header = `$ ${(hook.argv ?? h.argv).join(' ')}\n# ${hook.reason} exit=${hook.exitCode} ${hook.durationMs}ms\n`;
  const written = await writing(a, path, () =>
    writeEvidence(path, `${header}--- stdout (tail)\n${hook.stdoutTail}\n--- stderr (tail)\n${hook.stderrTail}\n`, a.ctx.secrets),
  );
  if (!written.ok) return err(written.error);
  a.rec.evidence.push(path);
  if (!hook.ok && hook.teardown?.survivors.length) a.rec.survivors.push(...hook.teardown.survivors);
  return ok(hook);
}

// The journal record of a hook tier's outcome.
function hookData(a: Attempt, hook: HookOutcome, evidence: string): HookDoneData {
  return {
    taskId: a.task.id,
    attempt: a.attempt,
    ok: hook.ok,
    reason: hook.reason,
    exitCode: hook.exitCode,
    durationMs: hook.durationMs,
    evidence,
  };
}
