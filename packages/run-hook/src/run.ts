import { err, formatDuration, unreachable, type Result } from '@runplan/common';
import { isAlive, processIdentity, stream, type Execution, type ProcessIdentity, type SettleEvent, type SettleSpec } from '@runplan/settle';
import { renderArgv, type TemplateError, type TemplateVars } from '@runplan/workdir';
import { hookEnv, hookEnvVariables } from './env.js';
import type { HookFailureReason, HookOutcome, HookTier } from './outcome.js';
import { drainInto, TailSink } from './tail.js';

/** The default hook deadline (DESIGN.md "Hooks"). */
export const DEFAULT_HOOK_TIMEOUT_MS = 10 * 60_000;

/** What a hook reports while it runs: its own milestones, and settle's events as they come. */
export type HookEvent =
  | { type: 'hook-refused'; tier: HookTier; error: TemplateError }
  | { type: 'hook-started'; tier: HookTier; argv: string[] }
  | { type: 'hook-settled'; tier: HookTier; outcome: HookOutcome }
  | { type: 'settle'; tier: HookTier; event: SettleEvent };

export interface RunHookOptions {
  tier: HookTier;
  /** The template variables: rendered into argv and (for the hook variables) the environment. */
  vars: TemplateVars;
  /** The hook's working directory (the coordinator passes the worktree). */
  cwd?: string;
  /** Deadline for the whole hook; default 10 minutes. */
  timeoutMs?: number;
  /** After the deadline's TERM, how long before KILL; settle's default when absent. */
  graceMs?: number;
  /** The coordinator's environment (default process.env); never a task's env/env_file. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Aborting ends the hook's tree and yields the `interrupted` outcome. */
  signal?: AbortSignal;
  /** An extra tag the hook's processes carry, so a later `teardownByTag` can find them. */
  ownerTag?: string;
  /** settle's ownership mode for the hook (`auto`, `cgroup`, `group+tag`); settle's default when absent. */
  ownership?: SettleSpec['ownership'];
  /** Where settle makes the hook's cgroup; settle's default when absent. */
  cgroupParent?: string;
  onEvent?: (event: HookEvent) => void;
  /** Where to pass the hook's stdout on to while its tail is kept (the CLI's passthrough). */
  stdout?: NodeJS.WritableStream;
  /** Where to pass the hook's stderr on to while its tail is kept. */
  stderr?: NodeJS.WritableStream;
}

/** A hook's outcome together with settle's execution, when anything was executed. */
export interface HookRun {
  outcome: HookOutcome;
  execution?: Execution;
  /** The refusal, when the template (or a hook variable) was refused and nothing ran. */
  refusal?: TemplateError;
  /** Why passing the hook's stdout on failed, when it did (EPIPE: a reader gone; ENOSPC: a full disk). */
  stdoutError?: Error;
}

// Runs one hook and returns its outcome; never throws for anything the hook does.
export async function runHook(argvTemplate: readonly string[], opts: RunHookOptions): Promise<HookOutcome> {
  return (await executeHook(argvTemplate, opts)).outcome;
}

/**
 * runHook, also returning settle's execution (the CLI maps it to an exit code with
 * settle's own `exitCodeFor`, so the mapping lives in one place).
 */
export async function executeHook(argvTemplate: readonly string[], opts: RunHookOptions): Promise<HookRun> {
  const { tier } = opts;
  // Observers never change outcomes: an onEvent that throws is ignored.
  const emit = (event: HookEvent): void => {
    try {
      opts.onEvent?.(event);
    } catch {
      // the observer's problem, not the hook's
    }
  };
  const rendered = renderHook(argvTemplate, opts.vars, tier);
  if (!rendered.ok) {
    emit({ type: 'hook-refused', tier, error: rendered.error });
    const outcome = refusedOutcome(rendered.error);
    emit({ type: 'hook-settled', tier, outcome });
    return { outcome, refusal: rendered.error };
  }
  const argv = rendered.value;
  emit({ type: 'hook-started', tier, argv });
  const stdout = new TailSink(opts.stdout);
  const stderr = new TailSink(opts.stderr);
  let hook: ProcessIdentity | undefined;
  const { execution } = await stream(
    {
      argv,
      cwd: opts.cwd,
      baseEnv: hookEnv(opts.baseEnv ?? process.env, opts.vars, tier),
      stderr,
      deadlineMs: opts.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
      graceMs: opts.graceMs,
      signal: opts.signal,
      ownerTag: opts.ownerTag,
      ...(opts.ownership !== undefined ? { ownership: opts.ownership } : {}),
      ...(opts.cgroupParent !== undefined ? { cgroupParent: opts.cgroupParent } : {}),
      onEvent: (event) => {
        if (event.type === 'spawned') hook = processIdentity(event.pid);
        emit({ type: 'settle', tier, event });
      },
    },
    undefined,
    async (output) => {
      // A broken passthrough surfaces only when the hook wrote more, and that write would
      // have earned it SIGPIPE on a real pipe; our pipe to it is a socket, so we deliver it:
      // to the hook's process group (the writer may be a grandchild, `sh -c 'yes'`), before
      // the socket closes (after, the next write meets ECONNRESET first).
      await drainInto(output, stdout, () => {
        if (hook && isAlive(hook)) sendSigpipe(hook.pid);
      });
    },
  );
  const outcome = hookOutcome(execution, argv, stdout.tail.text(), stderr.tail.text(), tier);
  emit({ type: 'hook-settled', tier, outcome });
  return { outcome, execution, ...(stdout.error !== undefined ? { stdoutError: stdout.error } : {}) };
}

function sendSigpipe(pid: number): void {
  try {
    process.kill(-pid, 'SIGPIPE');
  } catch {
    // it exited between the liveness check and the signal: nothing left to tell
  }
}

// Renders the argv in the tier and checks every hook variable the environment will carry,
// so a value the template language refuses can reach a hook neither as an argument nor as
// a variable. Nothing is spawned on any refusal.
function renderHook(argvTemplate: readonly string[], vars: TemplateVars, tier: HookTier): Result<string[], TemplateError> {
  for (const { env, variable } of hookEnvVariables(tier)) {
    if (vars[variable] === undefined) continue;
    const checked = renderArgv([`{{${variable}}}`], vars, tier);
    if (!checked.ok) {
      const { element: _element, ...error } = checked.error;
      return err({ ...error, message: `hook variable ${env}: ${error.message}` });
    }
  }
  const rendered = renderArgv(argvTemplate, vars, tier);
  if (rendered.ok) return rendered;
  const { element, text, message } = rendered.error;
  return err({ ...rendered.error, message: `argv[${element ?? '?'}] ${JSON.stringify(text)}: ${message}` });
}

function refusedOutcome(error: TemplateError): HookOutcome {
  return {
    ok: false,
    reason: 'template_refused',
    exitCode: null,
    signal: null,
    durationMs: 0,
    stdoutTail: '',
    stderrTail: '',
    message: error.message,
  };
}

// Maps settle's execution onto a hook outcome: only an exit 0 is ok.
export function hookOutcome(execution: Execution, argv: string[], stdoutTail: string, stderrTail: string, tier: HookTier): HookOutcome {
  const { exitCode, signal, durationMs, teardown } = execution;
  const evidence = { durationMs, stdoutTail, stderrTail, argv };
  const name = `${tier} hook ${argv[0] === undefined ? '(empty argv)' : argv[0] === '' ? '""' : argv[0]}`;
  const survivors = teardown.result === 'failed' ? `; survivors: ${teardown.survivors.join(', ')}` : '';
  const fail = (reason: HookFailureReason, message: string): HookOutcome => ({
    ok: false,
    reason,
    exitCode,
    signal,
    ...evidence,
    message: message + survivors,
    ...(teardown.result === 'none' ? {} : { teardown }),
  });
  switch (execution.reason) {
    case 'exited':
      // Exit 0 with processes left that teardown could not end is not ok: a hook that
      // leaves unkillable leftovers has not put the run in a known state.
      if (exitCode === 0 && teardown.result !== 'failed') return { ok: true, reason: 'ok', exitCode: 0, ...evidence };
      if (exitCode === 0) return fail('exited', `${name} exited 0 but left processes teardown could not end`);
      return fail('exited', `${name} exited ${exitCode}`);
    case 'signaled':
      return fail('signaled', `${name} was killed by ${signal}`);
    case 'timed_out':
      return fail('timed_out', `${name} passed its ${deadline(execution)} deadline and was torn down (${teardown.result})`);
    case 'stalled':
      // runHook never asks for a stall deadline; should settle report one, it is a deadline.
      return fail('timed_out', `${name} stalled and was torn down (${teardown.result})`);
    case 'spawn_failed':
      return fail('spawn_failed', `${name} could not be started: ${execution.error?.message ?? 'unknown error'}`);
    case 'interrupted':
      return fail('interrupted', `${name} was interrupted${execution.interruptSignal ? ` by ${execution.interruptSignal}` : ''}`);
    default:
      return unreachable(execution.reason);
  }
}

function deadline(execution: Execution): string {
  return execution.deadlineMs === undefined ? '' : formatDuration(execution.deadlineMs);
}
