import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { capture, exitCodeFor, stream, type Captured, type Execution } from '@runplan/settle';
import { newRunOwnerTag } from '../resume/leftovers.js';
import { afterPostRun, afterPreRun, runHook, type HookOutcome, type RunOutcome } from '@runplan/run-hook';
import { createDataDir, createRunDir, render, renderArgv, type TemplateVars } from '@runplan/workdir';
import type { TaskSpec } from '../plan/types.js';
import { agentConsumer, initialAgentState, type AgentState } from '../agent/consumer.js';
import { maskSecrets } from '../plan/secrets.js';
import { classifyCommand, classifyGate, decideRound, failureFingerprint, retryPrompt, type FailureClass } from '../repair/repair.js';
import { JournalFailure, type RunContext } from '../coordinator/context.js';
import {
  addUsage,
  ZERO_USAGE,
  type AttemptFailureData,
  type CheckpointData,
  type GateResult,
  type Phase,
  type UsageTotals,
} from '../events/types.js';
import { evidenceSink, fileTail, textTail, writeEvidence } from '../host/evidence.js';
import { compactUtc, attemptEvidenceDir, ensurePrivateDir } from '../host/state.js';
import { diskFailure, diskFaultInText, diskFaultOf, type DiskFault } from '../host/disk.js';
import {
  commonDir,
  describeGitFailure,
  git,
  gitSettled,
  headWithParents,
  isAncestor,
  resolveCommit,
  scrubbedGitEnv,
  succeeded,
  updateRef,
  type GitRunContext,
} from '../host/git.js';

/** How one attempt ended; a journal failure is not an outcome but a thrown JournalFailure. */
export type AttemptResult =
  | { ok: true; taskId: string; attempt: number; checkpoint: CheckpointData; survivors: number[]; usage: UsageTotals; costUsd: number }
  | {
      ok: false;
      taskId: string;
      attempt: number;
      failure: AttemptFailureData;
      evidence: string[];
      usage: UsageTotals;
      costUsd: number;
      /** Fingerprint inputs: the base the attempt started from and its own paths (masked). */
      baseCommit: string;
      ownPaths: string[];
    };

/** A step that failed: enough to close the attempt and to fingerprint it later. */
class StepFailed {
  constructor(readonly failure: AttemptFailureData) {}
}

function fail(cls: FailureClass, reason: string, phase: Phase, message: string, evidenceTail = ''): StepFailed {
  return new StepFailed({ class: cls, reason, phase, message, evidenceTail });
}

// sha256 hex of a string.
function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

// Quotes output lines so nothing in them reads as a line of the prompt's own protocol.
function quote(text: string): string {
  return text
    .replace(/\n+$/, '')
    .split('\n')
    .map((l) => `    | ${l}`)
    .join('\n');
}

// The content of a worktree as one hash (untracked files included), to tell whether a round changed anything.
async function treeState(tree: string): Promise<string> {
  await git(tree, ['add', '-A']);
  const out = await git(tree, ['write-tree']);
  return out.code === 0 ? out.stdout : `unknown-${Date.now()}`;
}

// A checkpoint's id: sha256 over its key fields in a fixed order, so dependency ids chain
// every upstream checkpoint into each downstream one.
export function checkpointId(key: Omit<CheckpointData, 'id' | 'attempt'>): string {
  return sha256(
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

// The variables of the `workdir` tier for one attempt (nothing that names the directory itself).
export function workdirVars(
  ctx: Pick<RunContext, 'plan' | 'runId' | 'startedAt'>,
  task: Pick<TaskSpec, 'id'>,
  attempt: number,
): Record<string, string | number> {
  const started = compactUtc(ctx.startedAt);
  return {
    'harness.name': ctx.plan.slug,
    'plan.slug': ctx.plan.slug,
    'run.id': ctx.runId,
    'task.id': task.id,
    'run.attempt': attempt,
    'run.date': `${started.slice(0, 4)}-${started.slice(4, 6)}-${started.slice(6, 8)}`,
    'run.time': started.slice(9, 15),
    'run.started_at': started,
  };
}

// Runs one attempt of a task, start to close, and journals every step (DESIGN "One attempt").
export async function runAttempt(
  ctx: RunContext,
  task: TaskSpec,
  attempt: number,
  previous?: { attempt: number; failure: AttemptFailureData },
): Promise<AttemptResult> {
  const started = Date.now();
  const ownerTag = newRunOwnerTag(ctx.runId);
  const baseCommit = ctx.integration.head;
  const evidenceDir = attemptEvidenceDir(ctx.run, task.id, attempt);
  const prompt =
    previous === undefined
      ? (task.prompt ?? '')
      : retryPrompt(task.prompt, { ...previous.failure, attempt: previous.attempt, evidence: previous.failure.evidenceTail }, (t) =>
          maskSecrets(t, ctx.secrets),
        );
  const baseVars = workdirVars(ctx, task, attempt);
  const planned = render(ctx.workdirTemplate, baseVars, 'workdir');
  const plannedDir = planned.ok ? planned.value : '';
  const state = new AttemptState(ctx, task, attempt, ownerTag, evidenceDir);

  await ctx.emit('attempt-started', {
    taskId: task.id,
    attempt,
    ownerTag,
    baseCommit,
    contractDigest: ctx.contractDigests.get(task.id) ?? '',
    promptDigest: sha256(prompt),
    dir: plannedDir,
    worktree: plannedDir === '' ? '' : join(plannedDir, 'tree'),
    evidenceDir,
    dependencyCheckpointIds: task.needs.map((id) => ctx.checkpoints.get(id) ?? ''),
  });

  let outcome: { checkpoint: CheckpointData } | StepFailed;
  try {
    outcome = { checkpoint: await state.pipeline(baseVars, baseCommit, prompt) };
  } catch (e) {
    if (e instanceof JournalFailure) throw e;
    const fault = diskFaultOf(e);
    if (e instanceof StepFailed) outcome = e;
    else if (fault !== undefined) outcome = state.diskFault(fault);
    else {
      const message = e instanceof Error ? e.message : String(e);
      outcome = fail('engine', 'internal_error', state.phase, maskSecrets(message, ctx.secrets));
    }
  }

  const durationMs = Date.now() - started;
  if (outcome instanceof StepFailed) {
    const failure = outcome.failure;
    await ctx.emit('attempt-closed', {
      taskId: task.id,
      attempt,
      outcome: failure.class === 'interrupted' ? 'interrupted' : 'failed',
      reason: failure.reason,
      class: failure.class,
      phase: failure.phase,
      failure,
      checkpointId: null,
      evidence: state.evidence,
      survivors: state.survivors,
      durationMs,
    });
    const ownPaths = [plannedDir, evidenceDir].filter((p) => p !== '');
    return {
      ok: false,
      taskId: task.id,
      attempt,
      failure,
      evidence: state.evidence,
      usage: state.usage,
      costUsd: state.costUsd,
      baseCommit,
      ownPaths,
    };
  }
  await state.removeWorktree();
  await ctx.emit('attempt-closed', {
    taskId: task.id,
    attempt,
    outcome: 'success',
    reason: 'ok',
    class: null,
    phase: null,
    failure: null,
    checkpointId: outcome.checkpoint.id,
    evidence: state.evidence,
    survivors: state.survivors,
    durationMs,
  });
  return {
    ok: true,
    taskId: task.id,
    attempt,
    checkpoint: outcome.checkpoint,
    survivors: state.survivors,
    usage: state.usage,
    costUsd: state.costUsd,
  };
}

/** The mutable record of one attempt while its pipeline runs. */
class AttemptState {
  phase: Phase = 'setup';
  evidence: string[] = [];
  survivors: number[] = [];
  usage: UsageTotals = ZERO_USAGE;
  costUsd = 0;
  worktree: string | undefined;
  readonly gitCtx: GitRunContext;

  constructor(
    readonly ctx: RunContext,
    readonly task: TaskSpec,
    readonly attempt: number,
    readonly ownerTag: string,
    readonly evidenceDir: string,
  ) {
    this.gitCtx = { ownerTag, signal: ctx.signal, env: ctx.gitIdentity };
  }

  async pipeline(baseVars: Record<string, string | number>, baseCommit: string, prompt: string): Promise<CheckpointData> {
    const { ctx, task } = this;
    await this.writing(this.evidenceDir, () => ensurePrivateDir(this.evidenceDir));

    // Attempt dir (marked, 0700) holding the worktree and the datadir.
    const dir = await createRunDir(ctx.workdirTemplate, baseVars);
    if (!dir.ok)
      throw (
        this.toolFault(dir.error.message, dir.error.path ?? '') ??
        fail('environment', 'workdir_failed', 'setup', `${dir.error.reason}: ${dir.error.message}`)
      );
    const tree = join(dir.value.path, 'tree');
    const addTree = () =>
      ctx.worktrees.exclusive(() =>
        gitSettled(ctx.repo, ['worktree', 'add', '--detach', '--quiet', '--end-of-options', tree, baseCommit], this.gitCtx),
      );
    let added = await addTree();
    // Another process (a second slug's coordinator, an operator) may race on .git/worktrees:
    // that failure names a directory it could not create; one more try settles it.
    if (!succeeded(added) && added.reason === 'exited' && /could not create directory/.test(added.stderr.toString('utf8')))
      added = await addTree();
    this.interruptedCheck(added.reason);
    if (!succeeded(added))
      throw (
        this.toolFault(added.stderr.toString('utf8'), tree) ??
        fail('environment', 'worktree_failed', 'setup', describeGitFailure(['worktree', 'add'], added))
      );
    this.worktree = tree;
    const data = await createDataDir(dir.value.path, ctx.runId);
    if (!data.ok)
      throw (
        this.toolFault(data.error.message, data.error.path ?? dir.value.path) ??
        fail('environment', 'datadir_failed', 'setup', `${data.error.reason}: ${data.error.message}`)
      );

    const vars: Record<string, string | number | undefined> = {
      ...baseVars,
      model: task.model,
      'harness.workdir': tree,
      'package.dir': ctx.repo,
      'run.datadir': data.value.path,
    };

    this.phase = 'pre_run';
    await this.preRun(vars, tree);

    this.phase = 'command';
    const command =
      this.task.until !== undefined ? await this.loop(vars, tree, prompt, baseCommit) : await this.command(vars, tree, prompt);
    let primary: StepFailed | undefined = command.failure;
    if (primary === undefined) {
      this.phase = 'gates';
      primary = await this.gates(vars, tree, 'gates');
    }

    this.phase = 'post_run';
    primary = await this.postRun(vars, tree, command.execution, primary);
    if (primary !== undefined) throw primary;

    this.phase = 'commit';
    const result = await this.commit(tree, baseCommit);

    this.phase = 'integrate';
    return ctx.integration.exclusive(() => this.integrate(vars, tree, baseCommit, result));
  }

  // A write of this attempt the file system refused: the run stops (every attempt is torn
  // down) and this attempt fails as class environment, disk_full or io_error.
  diskFault(fault: DiskFault): StepFailed {
    this.ctx.diskFailed(fault);
    return new StepFailed(diskFailure(fault, this.phase));
  }

  // One write of the attempt: a disk error becomes the attempt's (and the run's) failure.
  async writing<T>(path: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      const fault = diskFaultOf(e, path);
      throw fault !== undefined ? this.diskFault(fault) : e;
    }
  }

  // What a tool (git, workdir) said when its write failed, as a disk fault if it was one.
  toolFault(text: string, path: string): StepFailed | undefined {
    const fault = diskFaultInText(text, path);
    return fault !== undefined ? this.diskFault(fault) : undefined;
  }

  // A git command that writes objects (add, commit) failing for the disk: the path is the
  // repository's object store, the file system a later run checks for room.
  async objectsFault(c: Captured): Promise<StepFailed | undefined> {
    const text = c.stderr.toString('utf8');
    if (diskFaultInText(text, '') === undefined) return undefined;
    const common = await commonDir(this.ctx.repo);
    return this.toolFault(text, join(common ?? join(this.ctx.repo, '.git'), 'objects'));
  }

  // An aborted run turns whatever a step saw into the one canonical interruption.
  interruptedCheck(reason: string): void {
    if (reason === 'interrupted' || this.ctx.signal.aborted)
      throw fail('interrupted', 'interrupted', this.phase, 'the run was interrupted');
  }

  async preRun(vars: TemplateVars, tree: string): Promise<void> {
    const argv = this.ctx.plan.hooks.preRun;
    if (argv === undefined || argv.length === 0) return;
    const hook = await this.hook('pre_run', argv, vars, tree);
    const decision = afterPreRun(hook);
    await this.ctx.emit('pre-run-done', this.hookData(hook, join(this.evidenceDir, 'pre_run.log')));
    if (decision.proceed) return;
    if (decision.outcome === 'interrupted') throw fail('interrupted', 'interrupted', 'pre_run', 'the run was interrupted during pre_run');
    throw fail('environment', 'pre_run_failed', 'pre_run', `pre_run ${hook.reason}: ${hook.ok ? '' : hook.message}`, hook.stderrTail);
  }

  async hook(tier: 'pre_run' | 'post_run', argv: readonly string[], vars: TemplateVars, tree: string): Promise<HookOutcome> {
    const hook = await runHook(argv, {
      tier,
      vars,
      cwd: tree,
      timeoutMs: this.ctx.plan.hooks.timeoutMs,
      baseEnv: process.env,
      signal: this.ctx.signal,
      ownerTag: this.ownerTag,
    });
    const path = join(this.evidenceDir, `${tier}.log`);
    const header = `$ ${(hook.argv ?? argv).join(' ')}\n# ${hook.reason} exit=${hook.exitCode} ${hook.durationMs}ms\n`;
    await this.writing(path, () =>
      writeEvidence(path, `${header}--- stdout (tail)\n${hook.stdoutTail}\n--- stderr (tail)\n${hook.stderrTail}\n`, this.ctx.secrets),
    );
    this.evidence.push(path);
    if (!hook.ok && hook.teardown?.survivors.length) this.survivors.push(...hook.teardown.survivors);
    return hook;
  }

  hookData(hook: HookOutcome, evidence: string) {
    return {
      taskId: this.task.id,
      attempt: this.attempt,
      ok: hook.ok,
      reason: hook.reason,
      exitCode: hook.exitCode,
      durationMs: hook.durationMs,
      evidence,
    };
  }

  // The task's command through settle.stream: prompt on stdin, transcript saved as it
  // streams (masked), the task's env for this process only.
  async command(
    vars: TemplateVars,
    tree: string,
    prompt: string,
    round?: number,
  ): Promise<{ execution: Execution | undefined; failure?: StepFailed }> {
    const { ctx, task } = this;
    const argv = renderArgv(task.command, vars, 'pre_run');
    if (!argv.ok) return { execution: undefined, failure: fail('environment', 'template_refused', 'command', argv.error.message) };
    const suffix = round === undefined ? '' : `.round-${round}`;
    // A sink the disk refuses stops the run at once: the agent is torn down, not left to finish.
    let sinkFault: DiskFault | undefined;
    const onSinkError = (path: string) => (e: NodeJS.ErrnoException) => {
      const fault = diskFaultOf(e, path);
      if (fault === undefined || sinkFault !== undefined) return;
      sinkFault = fault;
      ctx.diskFailed(fault);
    };
    const transcriptPath = join(this.evidenceDir, `transcript${suffix}.${task.format === 'text' ? 'txt' : 'jsonl'}`);
    const stderrPath = join(this.evidenceDir, `stderr${suffix}.log`);
    const transcript = evidenceSink(transcriptPath, ctx.secrets, onSinkError(transcriptPath));
    const stderr = evidenceSink(stderrPath, ctx.secrets, onSinkError(stderrPath));
    this.evidence.push(transcript.path, stderr.path);
    const consume = agentConsumer(task.format, { transcript: transcript.stream });
    let settled: { execution: Execution; state: AgentState | undefined };
    try {
      settled = await stream(
        {
          argv: argv.value,
          cwd: tree,
          env: scrubbedGitEnv({ ...ctx.gitIdentity, ...task.env, ...task.envFileValues }),
          input: prompt,
          stderr: stderr.stream,
          deadlineMs: task.deadlineMs,
          graceMs: task.graceMs,
          ...(task.stallMs !== undefined ? { stallMs: task.stallMs } : {}),
          signal: ctx.signal,
          ownerTag: this.ownerTag,
        },
        initialAgentState(task.format),
        consume,
      );
    } finally {
      await Promise.all([transcript.close(), stderr.close()]);
    }
    const { execution, state } = settled;
    const usage = state !== undefined ? { ...state.usage } : ZERO_USAGE;
    this.usage = addUsage(this.usage, usage);
    this.costUsd += state?.costUsd ?? 0;
    this.survivors.push(...execution.teardown.survivors);
    const errorText = execution.error ? maskSecrets(`${execution.error.code}: ${execution.error.message}`, ctx.secrets) : null;
    await ctx.emit('command-settled', {
      taskId: task.id,
      attempt: this.attempt,
      reason: execution.reason,
      exitCode: execution.exitCode,
      signal: execution.signal,
      durationMs: execution.durationMs,
      teardown: { result: execution.teardown.result, survivors: execution.teardown.survivors, heldPipe: execution.teardown.heldPipe },
      error: errorText,
      sessionId: state?.sessionId ?? null,
      usage,
      costUsd: state?.costUsd ?? null,
      isError: state?.isError ?? false,
      providerLimited: state?.providerLimited ?? false,
      blocked: state?.blocked !== undefined ? maskSecrets(state.blocked, ctx.secrets) : null,
      finalMessage: state?.finalMessage !== undefined ? maskSecrets(textTail(state.finalMessage, 2000), ctx.secrets) : null,
      warnings: (state?.warnings ?? []).map((w) => maskSecrets(w, ctx.secrets)),
      transcript: transcript.path,
      stderr: stderr.path,
    });
    if (sinkFault !== undefined) return { execution, failure: this.diskFault(sinkFault) };
    // Every failure carries the stderr tail as its evidence; a success never reads it.
    const failure = this.classifyCommand(execution, state, errorText);
    if (failure !== undefined) failure.failure.evidenceTail = await fileTail(stderr.path);
    return { execution, failure };
  }

  // An improve-verify loop: the command in rounds on the same worktree, each round's prompt
  // carrying the previous verify output, until the `until` argv exits 0. A round that
  // changes nothing or fails verify exactly like the round before is stagnation; the last
  // round still red is rounds_exhausted. Rounds are journaled (round-done), so a resumed
  // task continues from the rounds left (hooks run once per attempt, not per round).
  async loop(
    vars: TemplateVars,
    tree: string,
    prompt: string,
    baseCommit: string,
  ): Promise<{ execution: Execution | undefined; failure?: StepFailed }> {
    const { ctx, task } = this;
    const until = renderArgv(task.until ?? [], vars, 'pre_run');
    if (!until.ok) return { execution: undefined, failure: fail('environment', 'template_refused', 'command', until.error.message) };
    const first = (ctx.roundsUsed.get(task.id) ?? 0) + 1;
    let previousFingerprint: string | undefined;
    let verifyTail = '';
    let last: Execution | undefined;
    for (let round = first; round <= task.rounds; round++) {
      const before = await treeState(tree);
      const roundPrompt =
        round === first || verifyTail === ''
          ? prompt
          : `${prompt.replace(/\n*$/, '\n')}\n----- runplan: verify after round ${round - 1} failed -----\n${quote(maskSecrets(verifyTail, ctx.secrets))}\n----- end of verify output -----\n`;
      const command = await this.command(vars, tree, roundPrompt, round);
      last = command.execution;
      if (command.failure !== undefined) return command;
      const verify = await this.check(until.value, tree);
      const output = `${verify.stdout.toString('utf8')}${verify.stderr.toString('utf8')}`;
      const path = join(this.evidenceDir, `verify.round-${round}.log`);
      await this.writing(path, () =>
        writeEvidence(path, `$ ${until.value.join(' ')}\n# ${verify.reason} exit=${verify.exitCode}\n${output}`, ctx.secrets),
      );
      this.evidence.push(path);
      this.interruptedCheck(verify.reason);
      const verifyPassed = verify.reason === 'exited' && verify.exitCode === 0;
      verifyTail = textTail(output, 4096);
      const verifyFingerprint = failureFingerprint(
        {
          class: 'task',
          evidence: maskSecrets(verifyTail, ctx.secrets),
          baseCommit,
          contractDigest: ctx.contractDigests.get(task.id) ?? '',
        },
        [this.evidenceDir, tree],
      );
      const decision = decideRound(
        {
          round,
          verifyPassed,
          treeChanged: (await treeState(tree)) !== before,
          verifyFingerprint,
          ...(previousFingerprint !== undefined ? { previousVerifyFingerprint: previousFingerprint } : {}),
        },
        task.rounds,
      );
      await ctx.emit('round-done', {
        taskId: task.id,
        attempt: this.attempt,
        round,
        verifyPassed,
        verifyFingerprint,
        action: decision.action,
        reason: decision.action === 'stop' ? decision.reason : null,
        evidence: path,
      });
      if (decision.action === 'done') return { execution: last };
      if (decision.action === 'stop')
        return {
          execution: last,
          failure: fail(decision.class, decision.reason, 'command', decision.detail, maskSecrets(verifyTail, ctx.secrets)),
        };
      previousFingerprint = verifyFingerprint;
    }
    return {
      execution: last,
      failure: fail('task', 'rounds_exhausted', 'command', `no rounds left of ${task.rounds}`, maskSecrets(verifyTail, ctx.secrets)),
    };
  }

  // What the command's settlement means for the attempt (undefined: it succeeded). The
  // class comes from repair.ts (the one classification); a transport error or survivors of
  // teardown fail an otherwise clean exit. The caller adds the stderr tail as evidence.
  classifyCommand(execution: Execution, state: AgentState | undefined, error: string | null): StepFailed | undefined {
    const { task } = this;
    const c = classifyCommand(execution, state, task);
    if (c !== undefined) {
      const messages: Record<string, string> = {
        interrupted: 'the run was interrupted',
        timed_out: `the command passed its deadline (${execution.deadlineMs ?? task.deadlineMs}ms)`,
        stalled: `the command wrote nothing for ${task.stallMs}ms`,
        spawn_failed: error ?? 'the command could not be started',
        signaled: `the command was killed by ${execution.signal}`,
        blocked: `the agent is blocked: ${state?.blocked ?? `exit ${execution.exitCode}`}`,
        provider_limited: `the provider refused (rate limit or overload), exit ${execution.exitCode}`,
        agent_error: `the agent reported an error: ${state?.errorMessage ?? ''}`,
        exited: `the command exited ${execution.exitCode}`,
      };
      const failed = fail(c.class, c.reason, 'command', maskSecrets(messages[c.reason] ?? c.reason, this.ctx.secrets));
      if (c.class === 'provider' && state?.resetAtMs !== undefined) failed.failure.resetAtMs = state.resetAtMs;
      return failed;
    }
    if (error !== null) return fail('task', 'transport_error', 'command', error);
    if (execution.teardown.result === 'failed') {
      return fail('teardown', 'teardown_failed', 'command', `processes survived teardown: ${execution.teardown.survivors.join(' ')}`);
    }
    return undefined;
  }

  // Runs the gates in order (captured, gate_deadline); the first failure stops them.
  // A gate or a loop's verify command: captured, in the worktree, held to gate_deadline,
  // owned by this attempt.
  check(argv: readonly string[], tree: string): Promise<Captured> {
    return capture({
      argv,
      cwd: tree,
      env: scrubbedGitEnv(this.ctx.gitIdentity),
      input: '',
      deadlineMs: this.task.gateDeadlineMs,
      signal: this.ctx.signal,
      ownerTag: this.ownerTag,
      maxBuffer: 4 << 20,
    });
  }

  async gates(vars: TemplateVars, tree: string, phase: 'gates' | 'integrate'): Promise<StepFailed | undefined> {
    const { ctx, task } = this;
    if (task.gates.length === 0) return undefined;
    const results: GateResult[] = [];
    let failure: StepFailed | undefined;
    for (const [i, template] of task.gates.entries()) {
      const argv = renderArgv(template, vars, 'pre_run');
      if (!argv.ok) {
        failure = fail('environment', 'template_refused', phase, argv.error.message);
        break;
      }
      const gate = await this.check(argv.value, tree);
      const path = join(this.evidenceDir, `${phase === 'gates' ? 'gate' : 'integrate-gate'}-${i + 1}.log`);
      const output = `$ ${argv.value.join(' ')}\n# ${gate.reason} exit=${gate.exitCode} ${gate.durationMs}ms\n--- stdout\n${gate.stdout.toString('utf8')}\n--- stderr\n${gate.stderr.toString('utf8')}\n`;
      await this.writing(path, () => writeEvidence(path, output, ctx.secrets));
      this.evidence.push(path);
      this.survivors.push(...gate.teardown.survivors);
      results.push({
        argv: argv.value.map((a) => maskSecrets(a, ctx.secrets)),
        reason: gate.reason,
        exitCode: gate.exitCode,
        durationMs: gate.durationMs,
        evidence: path,
      });
      const c = classifyGate(gate);
      if (c !== undefined) {
        const how = gate.reason === 'exited' ? `exited ${gate.exitCode}` : gate.reason;
        failure = fail(
          c.class,
          c.reason,
          phase,
          `gate ${i + 1} (${argv.value.join(' ')}) ${how}`,
          maskSecrets(textTail(output), ctx.secrets),
        );
        break;
      }
    }
    await ctx.emit('gates-done', { taskId: task.id, attempt: this.attempt, phase, passed: failure === undefined, gates: results });
    return failure;
  }

  // post_run after the command and gates (whenever pre_run succeeded): it may demote, never promote.
  async postRun(
    vars: TemplateVars,
    tree: string,
    execution: Execution | undefined,
    primary: StepFailed | undefined,
  ): Promise<StepFailed | undefined> {
    const argv = this.ctx.plan.hooks.postRun;
    if (argv === undefined || argv.length === 0) return primary;
    if (primary?.failure.class === 'interrupted' || this.ctx.signal.aborted)
      return primary ?? fail('interrupted', 'interrupted', 'post_run', 'the run was interrupted');
    const run: { outcome: RunOutcome; reason: string } =
      primary === undefined
        ? { outcome: 'success', reason: 'ok' }
        : { outcome: primary.failure.class === 'timeout' ? 'timed_out' : 'failed', reason: primary.failure.reason };
    const exitCode = execution !== undefined ? exitCodeFor(execution) : 1;
    const hook = await this.hook('post_run', argv, { ...vars, 'run.outcome': run.outcome, 'run.exit_code': exitCode }, tree);
    const after = afterPostRun(run, hook);
    await this.ctx.emit('post-run-done', { ...this.hookData(hook, join(this.evidenceDir, 'post_run.log')), demoted: after.demoted });
    if (after.demoted)
      return fail('gate', 'post_run_failed', 'post_run', `post_run ${hook.reason}: ${hook.ok ? '' : hook.message}`, hook.stderrTail);
    if (hook.reason === 'interrupted' && primary === undefined)
      return fail('interrupted', 'interrupted', 'post_run', 'the run was interrupted during post_run');
    return primary;
  }

  // Commits what the task left in its tree (it may also have committed itself) and checks
  // that something changed. Returns the attempt's own result commit (undefined: no change).
  async commit(tree: string, baseCommit: string): Promise<string | undefined> {
    const add = await gitSettled(tree, ['add', '-A'], this.gitCtx);
    this.interruptedCheck(add.reason);
    if (!succeeded(add))
      throw (await this.objectsFault(add)) ?? fail('environment', 'commit_failed', 'commit', describeGitFailure(['add', '-A'], add));
    const staged = await git(tree, ['diff', '--cached', '--quiet']);
    if (staged.code === 1) {
      const message = `runplan: ${this.task.id} (run ${this.ctx.runId}, attempt ${this.attempt})`;
      const commit = await gitSettled(tree, ['commit', '--quiet', '-m', message], this.gitCtx);
      this.interruptedCheck(commit.reason);
      if (!succeeded(commit))
        throw (
          (await this.objectsFault(commit)) ??
          fail('task', 'commit_failed', 'commit', describeGitFailure(['commit'], commit), commit.stderr.toString('utf8'))
        );
    } else if (staged.code !== 0) {
      throw fail('environment', 'commit_failed', 'commit', `git diff --cached: ${staged.stderr}`);
    }
    // HEAD and its parents in one process: the usual result (one commit on top of the base)
    // has the base as a parent, which proves the ancestry; anything else asks merge-base.
    const resolved = await headWithParents(tree);
    if (resolved === undefined) throw fail('task', 'commit_failed', 'commit', 'the worktree has no HEAD commit');
    const { head, parents } = resolved;
    if (head === baseCommit) {
      if (this.task.expect === 'none') return undefined;
      throw fail('task', 'zero_diff', 'commit', `task ${this.task.id} changed nothing (expect = "commit")`);
    }
    if (!parents.includes(baseCommit) && (await isAncestor(tree, baseCommit, head)) !== true) {
      throw fail(
        'task',
        'history_rewritten',
        'commit',
        `the task's HEAD ${head.slice(0, 12)} does not descend from its base ${baseCommit.slice(0, 12)}`,
      );
    }
    return head;
  }

  // Puts the result on top of the integration head (fast-forward, or rebase onto a head
  // that moved and re-run the gates), then checkpoint → branch moved. Runs exclusively.
  async integrate(vars: TemplateVars, tree: string, attemptBase: string, own: string | undefined): Promise<CheckpointData> {
    const { ctx, task } = this;
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
      const rebase = await gitSettled(tree, ['rebase', '--quiet', '--end-of-options', onto], this.gitCtx);
      if (!succeeded(rebase)) {
        await git(tree, ['rebase', '--abort']);
        this.interruptedCheck(rebase.reason);
        const detail = describeGitFailure(['rebase', onto.slice(0, 12)], rebase);
        const path = join(this.evidenceDir, 'rebase.log');
        const fault = this.toolFault(rebase.stderr.toString('utf8'), tree);
        if (fault !== undefined) throw fault;
        await this.writing(path, () =>
          writeEvidence(
            path,
            `${detail}\n--- stdout\n${rebase.stdout.toString('utf8')}\n--- stderr\n${rebase.stderr.toString('utf8')}\n`,
            ctx.secrets,
          ),
        );
        this.evidence.push(path);
        if (rebase.reason === 'exited')
          throw fail(
            'integration',
            'integration_conflict',
            'integrate',
            `rebase onto ${onto.slice(0, 12)} conflicted: ${detail}`,
            rebase.stdout.toString('utf8') + rebase.stderr.toString('utf8'),
          );
        throw fail(rebase.reason === 'timed_out' ? 'timeout' : 'environment', rebase.reason, 'integrate', detail);
      }
      const head = await resolveCommit(tree, 'HEAD');
      if (head === undefined) throw fail('integration', 'integration_conflict', 'integrate', 'no HEAD after rebase');
      resultCommit = head;
      const gates = await this.gates(vars, tree, 'integrate');
      if (gates !== undefined) throw gates;
    }
    await ctx.emit('integrated', { taskId: task.id, attempt: this.attempt, mode, attemptBase, onto, resultCommit });

    const key = {
      logicalRunId: ctx.runId,
      planDigest: ctx.planDigest,
      taskId: task.id,
      taskContractDigest: ctx.contractDigests.get(task.id) ?? '',
      dependencyCheckpointIds: task.needs.map((id) => ctx.checkpoints.get(id) ?? ''),
      baseCommit: onto,
      resultCommit,
    };
    const checkpoint: CheckpointData = { id: checkpointId(key), ...key, attempt: this.attempt };
    await ctx.emit('checkpoint', checkpoint);

    if (resultCommit !== onto) {
      const moved = await updateRef(ctx.repo, ctx.integration.branchRef, resultCommit, onto);
      if (!moved.ok) {
        const fault = this.toolFault(moved.error.message, ctx.repo);
        if (fault !== undefined) throw fault;
        throw fail(
          'invariant',
          'branch_moved',
          'integrate',
          `${ctx.integration.branchRef} is at ${moved.error.actual ?? 'nothing'}, expected ${onto}: someone else moved it`,
        );
      }
      ctx.integration.head = resultCommit;
      await ctx.emit('branch-updated', {
        taskId: task.id,
        attempt: this.attempt,
        branch: ctx.integration.branchRef,
        from: onto,
        to: resultCommit,
      });
    }
    return checkpoint;
  }

  // Removes a finished attempt's worktree (its result is checkpointed); failed ones stay as evidence.
  async removeWorktree(): Promise<void> {
    if (this.worktree === undefined) return;
    const tree = this.worktree;
    await this.ctx.worktrees.exclusive(() => git(this.ctx.repo, ['worktree', 'remove', '--force', '--end-of-options', tree]));
  }
}
