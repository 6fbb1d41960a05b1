import { roundSuffix, transcriptPath } from '../host/evidence-names.js';
import { join } from 'node:path';
import type { Execution } from '@runplan/settle';
import { renderArgv, type TemplateVars } from '@runplan/workdir';
import { PLAN_DEFAULTS } from '../plan/types.js';
import { agentConsumer, initialAgentState, type AgentState } from '../agent/consumer.js';
import { maskSecrets } from '../plan/secrets.js';
import { addUsage, totalTokensOf, uncountedUsage, ZERO_USAGE } from '../events/types.js';
import { evidenceSink, fileTail, textTail } from '../host/evidence.js';
import { diskFaultOf, type DiskFault } from '../host/disk.js';
import { scrubbedGitEnv } from '../host/git.js';
import { commandExecutor, executorFor } from '../executor/index.js';
import { commandEvidence, commandFailure } from './command-failure.js';
import type { AttemptFailureData } from '../events/types.js';
import type { EngineReason } from '../events/reasons.js';
import { diskFault, fail } from './failure.js';
import { jobEvents } from './job-events.js';
import { settleOwnership } from './ownership.js';
import type { Attempt } from './record.js';

/** The command's settlement, and the failure it means (none: it succeeded). */
export interface CommandRun {
  execution: Execution | undefined;
  failure?: AttemptFailureData;
}

// The task's command through settle.stream: prompt on stdin, transcript saved as it
// streams (masked), the task's env for this process only.
export async function runCommand(
  a: Attempt,
  at: { vars: TemplateVars; tree: string; prompt: string; round?: number },
): Promise<CommandRun> {
  const { ctx, task } = a;
  const argv = renderArgv(task.command, at.vars, 'pre_run');
  if (!argv.ok) return { execution: undefined, failure: fail('template_refused', 'command', argv.error.message) };
  // A sink the disk refuses stops the run at once: the agent is torn down, not left to finish.
  let sinkFault: DiskFault | undefined;
  const onSinkError = (path: string) => (e: NodeJS.ErrnoException) => {
    const fault = diskFaultOf(e, path);
    if (fault === undefined || sinkFault !== undefined) return;
    sinkFault = fault;
    ctx.diskFailed(fault);
  };
  const transcriptFile = transcriptPath(a.evidenceDir, task.format, at.round);
  const stderrPath = join(a.evidenceDir, `stderr${roundSuffix(at.round)}.log`);
  const transcript = evidenceSink(transcriptFile, ctx.secrets, onSinkError(transcriptFile));
  const stderr = evidenceSink(stderrPath, ctx.secrets, onSinkError(stderrPath));
  a.rec.evidence.push(transcript.path, stderr.path);
  // The agent's terminal line ends the attempt: silent for result_grace after it, it is torn down.
  const finisher = new AbortController();
  const live = liveUsage(a);
  const consume = agentConsumer(task.format, {
    transcript: transcript.stream,
    onState: live.onState,
    resultGraceMs: task.resultGraceMs ?? PLAN_DEFAULTS.resultGraceMs,
    finish: () => finisher.abort(),
  });
  let settled: { execution: Execution; state: AgentState | undefined; engine?: { reason: EngineReason; message: string } };
  try {
    settled = await executorFor(commandExecutor(task)).stream(
      {
        argv: argv.value,
        cwd: at.tree,
        env: scrubbedGitEnv({ ...ctx.gitIdentity, ...task.env, ...task.envFileValues }),
        input: at.prompt,
        stderr: stderr.stream,
        deadlineMs: task.deadlineMs,
        graceMs: task.graceMs,
        ...(task.stallMs !== undefined ? { stallMs: task.stallMs } : {}),
        signal: ctx.signal,
        finish: finisher.signal,
        ownerTag: a.ownerTag,
        ...settleOwnership(a.ownership),
      },
      initialAgentState(task.format),
      consume,
      jobEvents(a, 'command'),
    );
  } finally {
    live.stop();
    await Promise.all([transcript.close(), stderr.close()]);
  }
  const { execution, state } = settled;
  // codex reports each thread's running total: what earlier commands counted of a resumed thread is not spent again.
  const threads = Object.entries(state?.threads ?? {}).map(([threadId, lastTotal]) => ({ threadId, lastTotal: { ...lastTotal } }));
  const usage = uncountedUsage(state !== undefined ? { ...state.usage } : ZERO_USAGE, threads, ctx.threadTotals);
  for (const t of threads) ctx.threadTotals.set(t.threadId, t.lastTotal);
  a.rec.usage = addUsage(a.rec.usage, usage);
  a.rec.costUsd += state?.costUsd ?? 0;
  a.rec.survivors.push(...execution.teardown.survivors);
  const errorText = execution.error ? maskSecrets(`${execution.error.code}: ${execution.error.message}`, ctx.secrets) : null;
  await ctx.emit('command-settled', {
    taskId: task.id,
    attempt: a.attempt,
    ...(at.round !== undefined ? { round: at.round } : {}),
    reason: execution.reason,
    ownership: execution.ownership,
    exitCode: execution.exitCode,
    signal: execution.signal,
    durationMs: execution.durationMs,
    teardown: { result: execution.teardown.result, survivors: execution.teardown.survivors, heldPipe: execution.teardown.heldPipe },
    error: errorText,
    sessionId: state?.sessionId ?? null,
    usage,
    ...(threads.length > 0 ? { threads } : {}),
    costUsd: state?.costUsd ?? null,
    isError: state?.isError ?? false,
    providerLimited: state?.providerLimited ?? false,
    blocked: state?.blocked !== undefined ? maskSecrets(state.blocked, ctx.secrets) : null,
    finalMessage: state?.finalMessage !== undefined ? maskSecrets(textTail(state.finalMessage, 2000), ctx.secrets) : null,
    warnings: [
      ...(state?.warnings ?? []).map((w) => maskSecrets(w, ctx.secrets)),
      ...lingerWarning(execution, task.resultGraceMs ?? PLAN_DEFAULTS.resultGraceMs),
    ],
    ...(execution.endedBy === 'consumer' ? { lingered: true } : {}),
    transcript: transcript.path,
    stderr: stderr.path,
  });
  if (sinkFault !== undefined) return { execution, failure: diskFault(a, sinkFault) };
  // Every failure carries the stderr tail (and the error the agent reported) as its evidence;
  // a success never reads it. The engine's own reason (a Slurm cancel, OOM, node failure)
  // outranks how srun ended.
  const failure =
    settled.engine !== undefined
      ? fail(settled.engine.reason, 'command', maskSecrets(settled.engine.message, ctx.secrets))
      : commandFailure(a, { execution, state, error: errorText });
  if (failure === undefined) return { execution };
  return { execution, failure: { ...failure, evidenceTail: commandEvidence(await fileTail(stderr.path), state, ctx.secrets) } };
}

// The command's spend so far for the live table, at most once a second: the latest state
// goes out at the end of each second it changed in (what a resumed codex thread already
// counted left out, as at the settle). `stop` once the command settled: nothing after it.
function liveUsage(a: Attempt): { onState: (state: AgentState) => void; stop: () => void } {
  let last = 0;
  let sent = -1;
  let latest: AgentState | undefined;
  let timer: NodeJS.Timeout | undefined;
  const send = (): void => {
    timer = undefined;
    if (latest === undefined) return;
    const state = latest;
    const threads = Object.entries(state.threads ?? {}).map(([threadId, lastTotal]) => ({ threadId, lastTotal }));
    const tokens = totalTokensOf(uncountedUsage(state.usage, threads, a.ctx.threadTotals));
    const costUsd = state.costUsd ?? 0;
    last = Date.now();
    if (tokens + costUsd === sent) return;
    sent = tokens + costUsd;
    a.ctx.liveUsage({ taskId: a.task.id, attempt: a.attempt, tokens, costUsd });
  };
  return {
    onState: (state) => {
      latest = state;
      if (timer !== undefined) return;
      timer = setTimeout(send, Math.max(0, last + 1000 - Date.now()));
      timer.unref();
    },
    stop: () => {
      clearTimeout(timer);
      timer = undefined;
      latest = undefined;
    },
  };
}

// The warning of an agent torn down after lingering past its terminal line.
function lingerWarning(execution: Execution, graceMs: number): string[] {
  return execution.endedBy === 'consumer' ? [`the agent stayed alive ${graceMs}ms after its terminal line; torn down (result_grace)`] : [];
}
