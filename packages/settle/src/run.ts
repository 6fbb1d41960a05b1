import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { drainRest, pipeHolders } from './drain.js';
import { feedPrompt, type PromptFailure } from './input.js';
import { findOwned, survey, type OwnedProcess, type Ownership, type Survey } from './owned.js';
import { ChildOutputs } from './outputs.js';
import { removeCgroup } from './cgroup.js';
import { chooseOwnership, isOwnershipMode, releaseCgroup, spawnOwned, type OwnershipChoice } from './ownership-choice.js';
import { procMismatch, procSource } from './procfs.js';
import { codeOf, messageOf, preflight, releasePrompt } from './preflight.js';
import { childEnv, isOwnerTag, newOwnerTag } from './tag.js';
import { endTree, noTeardown } from './teardown.js';
import { longTimeout } from '@runplan/common';
import { within } from './wait.js';
import type { Execution, PipeHolders, SettleEvent, SettleReason, SettleSpec, TeardownReport, TransportError } from './types.js';

// Monotonic milliseconds (not node:perf_hooks: loading it allocates ~300 KB, enough to cost
// the settle CLI a garbage collection during start-up).
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

/** How the consumer of stdout finished; `undefined` when it never started (spawn failure). */
export type Consumed<R> = { kind: 'returned'; value: R } | { kind: 'threw'; error: unknown };

export interface RunOptions {
  stderrDefault: 'inherit' | 'capture';
  /** Bytes of captured stderr kept; the rest is read and dropped. */
  stderrLimit: number;
}

export interface RunOutcome<R> {
  execution: Execution;
  consumed: Consumed<R> | undefined;
  stderr: Buffer;
  stderrTruncated: boolean;
}

const defaultGraceMs = 5000;
const pollMs = 50;
/** After a teardown's KILL, how long the `exit` event may trail the reap we saw in /proc. */
const exitTrailMs = 1000;

type Termination = 'timed_out' | 'stalled' | 'interrupted' | 'finished';

/**
 * Runs one child to settlement. The state machine:
 *
 *   spawn ──error──────────────────────────────────────────▶ spawn_failed
 *     │
 *     ├─ exit ─▶ drain stdout/stderr until EOF or grace ─▶ end leftovers of the owned tree
 *     │           (held pipe noted)                          (after the rest of grace) ─┐
 *     │                                                                                 ▼
 *     └─ deadline | stall | abort ─▶ killSignal to the owned tree, grace, KILL, reap ─▶ close out:
 *                                                                  destroy readers, join every worker
 *
 * Settlement is driven by `exit`/`error`, never by `close`: `close` waits for every stdio
 * stream, and a grandchild holding the pipe can keep it from ever arriving. Every wait
 * above is bounded, so this always returns.
 */
export async function runChild<R>(
  spec: SettleSpec,
  options: RunOptions,
  consume: (stdout: Readable) => Promise<R>,
): Promise<RunOutcome<R>> {
  const startedAt = monotonicMs();
  const tag = newOwnerTag();
  const graceMs = spec.graceMs ?? defaultGraceMs;
  // 0 means none, as on the CLI.
  const deadlineMs = spec.deadlineMs || undefined;
  const stallMs = spec.stallMs || undefined;
  const killSignal = spec.killSignal ?? 'SIGTERM';
  const killAfterMs = spec.killAfterMs ?? graceMs;
  const proc = procSource(spec.proc);
  const emit = (event: SettleEvent) => {
    try {
      spec.onEvent?.(event);
    } catch {
      // observers never change outcomes
    }
  };
  // How the child is owned, as far as decided (the settlement reports it whatever happened).
  let owning: OwnershipChoice = { kind: 'group+tag' };
  const ownershipFields = () => ({
    ownership: owning.kind === 'cgroup' ? ('cgroup' as const) : ('group+tag' as const),
    ...(owning.kind === 'group+tag' && owning.fallback ? { ownershipFallback: owning.fallback } : {}),
    ...(owning.kind === 'cgroup' ? { cgroup: owning.cgroup.path } : {}),
  });
  const fixed = {
    graceMs,
    tag,
    ...(deadlineMs !== undefined ? { deadlineMs } : {}),
    ...(stallMs !== undefined ? { stallMs } : {}),
    ...(spec.ownerTag !== undefined ? { ownerTag: spec.ownerTag } : {}),
  };
  const unstarted = (reason: SettleReason, error?: TransportError, interruptSignal?: NodeJS.Signals): RunOutcome<R> => {
    const execution: Execution = {
      reason,
      exitCode: null,
      signal: null,
      pid: undefined,
      durationMs: Math.round(monotonicMs() - startedAt),
      ...fixed,
      ...ownershipFields(),
      teardown: noTeardown(),
      ...(error ? { error } : {}),
      ...(interruptSignal ? { interruptSignal } : {}),
      bytesIn: 0,
      bytesOut: 0,
    };
    if (error) emit({ type: 'spawn-failed', error });
    emit({ type: 'settled', execution });
    return { execution, consumed: undefined, stderr: Buffer.alloc(0), stderrTruncated: false };
  };

  if (spec.ownerTag !== undefined && !isOwnerTag(spec.ownerTag)) {
    return unstarted('spawn_failed', {
      code: 'EINVAL',
      where: 'spec',
      message: `ownerTag ${JSON.stringify(spec.ownerTag)} is not [A-Za-z0-9_]{1,64}`,
    });
  }
  for (const key of ['deadlineMs', 'graceMs', 'killAfterMs', 'stallMs'] as const) {
    const value: unknown = spec[key];
    if (value !== undefined && !isMilliseconds(value)) {
      return unstarted('spawn_failed', {
        code: 'EINVAL',
        where: 'spec',
        message: `${key} ${String(value)} is not a finite number of milliseconds >= 0`,
      });
    }
  }
  const mode = spec.ownership ?? 'auto';
  if (!isOwnershipMode(mode)) {
    return unstarted('spawn_failed', {
      code: 'EINVAL',
      where: 'spec',
      message: `ownership ${JSON.stringify(mode)} is not auto, cgroup or group+tag`,
    });
  }
  if (!isSignalName(killSignal)) {
    return unstarted('spawn_failed', {
      code: 'EINVAL',
      where: 'spec',
      message: `killSignal ${JSON.stringify(killSignal)} is not a signal name (SIGTERM, SIGINT, ...)`,
    });
  }
  const wrongProc = spec.proc === undefined ? procMismatch() : undefined;
  if (wrongProc !== undefined) return unstarted('spawn_failed', { code: 'proc_mismatch', where: 'proc', message: wrongProc });
  if (spec.signal?.aborted) return unstarted('interrupted', undefined, signalOf(spec.signal.reason));
  const plan = preflight(spec);
  if (!plan.ok) return unstarted('spawn_failed', plan.error);
  const prompt = plan.prompt;

  const stderrPolicy = spec.stderr ?? options.stderrDefault;
  const stdio: StdioOptions = [
    spec.input === 'inherit' ? 'inherit' : prompt ? 'pipe' : 'ignore',
    'pipe',
    stderrPolicy === 'inherit' || stderrPolicy === 'ignore' ? stderrPolicy : 'pipe',
  ];
  const tags = spec.ownerTag !== undefined ? [tag, spec.ownerTag] : [tag];
  const chosen = chooseOwnership(mode, {
    tag,
    ...(spec.cgroupParent !== undefined ? { parent: spec.cgroupParent } : {}),
    ...(spec.ownerTag !== undefined ? { ownerTag: spec.ownerTag } : {}),
  });
  let child: ChildProcess;
  try {
    const [file, ...args] = spec.argv;
    const started = spawnOwned(mode, chosen, () =>
      spawn(file as string, args, {
        ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
        env: childEnv(spec.baseEnv ?? process.env, spec.env, tags),
        stdio,
        detached: true,
      }),
    );
    if ('refused' in started) {
      releasePrompt(prompt);
      const { reason, message } = started.refused;
      return unstarted('spawn_failed', { code: reason, where: 'cgroup', message: `ownership "cgroup" needs a cgroup: ${message}` });
    }
    owning = started.choice;
    child = started.spawned;
  } catch (cause) {
    releasePrompt(prompt);
    return unstarted('spawn_failed', spawnError(spec.argv, cause));
  }
  const cgroup = owning.kind === 'cgroup' ? owning.cgroup : undefined;
  emit({
    type: 'ownership',
    ownership: cgroup ? 'cgroup' : 'group+tag',
    ...(cgroup ? { cgroup: cgroup.path } : {}),
    ...(owning.kind === 'group+tag' && owning.fallback ? { fallback: owning.fallback } : {}),
  });

  // From here on every stream gets an error listener before anything can fail.
  let firstError: TransportError | undefined;
  let closingOut = false;
  const record = (error: TransportError) => {
    if (firstError) return;
    firstError = error;
    emit({ type: 'transport-error', error });
  };
  child.stdin?.on('error', () => {}); // failures are read from the write callbacks in feedPrompt
  child.stdout?.on('error', (cause) => {
    if (!closingOut) record({ code: codeOf(cause) ?? 'EIO', where: 'stdout', message: `reading stdout: ${messageOf(cause)}`, cause });
  });
  child.stderr?.on('error', (cause) => {
    if (!closingOut) record({ code: codeOf(cause) ?? 'EIO', where: 'stderr', message: `reading stderr: ${messageOf(cause)}`, cause });
  });
  const startError = new Promise<unknown>((resolve) => child.on('error', resolve));
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve();
    }),
  );

  const exitNow = () => exitInfo; // read through a call: the 'exit' listener assigns it while we await
  const pid = child.pid;
  if (pid === undefined) {
    const cause = await startError;
    releasePrompt(prompt);
    for (const s of [child.stdin, child.stdout, child.stderr]) s?.destroy();
    if (cgroup) await releaseCgroup(cgroup);
    return unstarted('spawn_failed', spawnError(spec.argv, cause));
  }

  const childStat = proc.readStat(pid);
  // In a cgroup, membership is read from the cgroup alone: no walk of /proc, nothing escapes it.
  const ownership: Ownership = cgroup
    ? { pgid: pid, groupStartTime: childStat?.startTime ?? 0, tags: [], cgroups: [cgroup.path] }
    : { pgid: pid, groupStartTime: childStat?.startTime ?? 0, tags: [tag] };
  const childEnds = [1, 2]
    .filter((fd) => stdio[fd] === 'pipe')
    .map((fd) => proc.readFdTarget(pid, fd))
    .filter((t) => t !== undefined);
  emit({ type: 'spawned', pid, tag, argv: spec.argv });

  // Requested termination: the first requester wins and outranks how the child then dies.
  let requested: Termination | undefined;
  let interruptSignal: NodeJS.Signals | undefined;
  let wakeTermination: () => void = () => {};
  const termination = new Promise<void>((resolve) => (wakeTermination = resolve));
  const request = (why: Termination) => {
    if (requested || settled) return;
    if (why !== 'interrupted' && exitInfo) return;
    requested = why;
    wakeTermination();
  };
  let settled = false;
  const deadlineTimer =
    deadlineMs !== undefined
      ? longTimeout(deadlineMs, () => {
          emit({ type: 'deadline', deadlineMs });
          request('timed_out');
        })
      : undefined;
  const stallTimer =
    stallMs !== undefined
      ? longTimeout(stallMs, () => {
          emit({ type: 'stall', stallMs });
          request('stalled');
        })
      : undefined;
  const onAbort = () => {
    interruptSignal = signalOf(spec.signal?.reason);
    emit({ type: 'interrupt' });
    request('interrupted');
  };
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  // The consumer ending the child (spec.finish): torn down as at a deadline, settled as it died.
  const onFinish = () => request('finished');
  if (spec.finish?.aborted) onFinish();
  else spec.finish?.addEventListener('abort', onFinish, { once: true });

  const outputs = new ChildOutputs(child, stderrPolicy, options.stderrLimit, () => stallTimer?.refresh());

  // The consumer reads concurrently with the prompt writer.
  const consumed: Promise<Consumed<R>> = (async () => consume(outputs.forConsumer))().then(
    (value) => ({ kind: 'returned', value }),
    (error: unknown) => ({ kind: 'threw', error }),
  );
  // Its error is recorded the moment it finishes, so an EPIPE that comes later cannot outrank it.
  let consumerDone = false;
  void consumed.then((result) => {
    consumerDone = true;
    outputs.stopReadingStdout();
    if (result.kind === 'threw') {
      record({
        code: 'consumer_threw',
        where: 'consumer',
        message: `stdout consumer threw: ${messageOf(result.error)}`,
        cause: result.error,
      });
    } else if (result.value instanceof Error) {
      record({
        code: 'consumer_error',
        where: 'consumer',
        message: `stdout consumer failed: ${result.value.message}`,
        cause: result.value,
      });
    }
  });

  let bytesIn = 0;
  const fed: Promise<PromptFailure | undefined> =
    prompt && child.stdin ? feedPrompt(prompt, child.stdin, (n) => (bytesIn += n)) : Promise.resolve(undefined);
  // A prompt cut off by a teardown we asked for is its consequence, not a transport error.
  void fed.then((failure) => {
    if (failure && !closingOut && !requested) record(promptError(failure, exitInfo !== undefined));
  });

  const ownedNow = () => findOwned(ownership, proc);
  // The ownership scan and who still holds the child's end of our pipes, in one walk: a
  // holder that inherited the end started no earlier than the child, so the scan reads the
  // fds of those processes too. Only when none of them holds it are the fds of every process
  // read, for an older holder that was handed the fd. Without the child's ends (it closed
  // them before we looked) no pipe can be matched: while it owns processes, the pipe counts
  // as held by holders `'unknown'` (naming the owned processes would name non-holders too).
  const surveyNow = (): { owned: Survey['owned']; holders: PipeHolders } => {
    if (childEnds.length === 0) {
      const owned = ownedNow();
      return { owned, holders: owned.length > 0 ? 'unknown' : [] };
    }
    const found = survey(ownership, proc, childEnds);
    return found.holders.length > 0 ? found : { owned: found.owned, holders: pipeHolders(childEnds, proc) };
  };
  let heldPipe = false;
  const deadlineAt = deadlineMs !== undefined ? Date.now() + deadlineMs : undefined;
  const finalDrain = async () => {
    if (outputs.finished) return;
    const rules = {
      holders: () => surveyNow().holders,
      graceMs,
      // Patient only after a normal exit, when /proc shows nobody else holding the pipe.
      patient: !requested && childEnds.length > 0,
      ...(requested ? {} : { stop: termination }), // an interruption during the drain cuts it short
      ...(deadlineAt !== undefined ? { until: deadlineAt } : {}),
    };
    if (await drainRest(outputs, rules)) heldPipe = true;
  };

  const afterExit = async (): Promise<TeardownReport> => {
    emit({ type: 'exited', exitCode: exitInfo?.code ?? null, signal: exitInfo?.signal ?? null });
    const exitAt = Date.now();
    if (!outputs.finished) await within(Promise.race([outputs.done, termination]), graceMs);
    let left: OwnedProcess[] | undefined;
    if (!outputs.finished) {
      const found = surveyNow();
      left = found.owned;
      if (found.holders === 'unknown' || found.holders.length > 0) {
        heldPipe = true;
        emit({ type: 'held-pipe', holders: found.holders });
      }
    }
    // Leftovers get the rest of grace to finish on their own, then are torn down. A cgroup
    // that can be removed is empty: nothing is left, and it is released at once.
    left ??= cgroup && removeCgroup(cgroup.path) ? [] : ownedNow();
    while (left.length > 0 && Date.now() < exitAt + graceMs && !requested) {
      await within(termination, Math.max(0, Math.min(pollMs * 2, exitAt + graceMs - Date.now())));
      left = ownedNow();
    }
    const teardown =
      left.length > 0
        ? await endTree({
            ownership,
            proc,
            signal: killSignal,
            graceMs: killAfterMs,
            onEvent: emit,
            why: requested ?? 'leftovers',
            hurry: termination,
            found: left,
            ...(outputs.finished ? {} : { pipesClosed: outputs.done }),
          })
        : noTeardown();
    await finalDrain();
    return teardown;
  };

  const first = await Promise.race([exited.then(() => 'exit' as const), termination.then(() => 'terminate' as const)]);
  deadlineTimer?.cancel();
  stallTimer?.cancel();
  let teardown: TeardownReport;
  if (first === 'terminate' && !exitInfo) {
    teardown = await endTree({ ownership, proc, signal: killSignal, graceMs: killAfterMs, onEvent: emit, why: requested!, exited });
    await within(exited, exitTrailMs);
    const late = exitNow();
    if (late) emit({ type: 'exited', exitCode: late.code, signal: late.signal });
    await finalDrain();
  } else {
    teardown = await afterExit();
  }

  // Close out: destroy what is left of the pipes, end the consumer's stream, join every worker.
  closingOut = true;
  outputs.closeOut();
  child.stdin?.destroy();
  if (!exitInfo) child.unref();
  // The consumer reads what is left at its own pace after a normal exit (until the deadline,
  // if any, or an interruption); after a teardown it gets `grace`, then its stream is
  // destroyed under it.
  if (!requested) {
    const finishedOrInterrupted = Promise.race([consumed, termination]);
    if (deadlineAt === undefined) await finishedOrInterrupted;
    else await within(finishedOrInterrupted, Math.max(deadlineAt - Date.now(), graceMs));
  }
  if (!consumerDone) await within(consumed, graceMs);
  if (!consumerDone) outputs.forConsumer.destroy(new Error('settle: the consumer did not finish reading in time after the child settled'));
  const result = await consumed;
  await fed;
  if (cgroup) await releaseCgroup(cgroup);
  settled = true;
  spec.signal?.removeEventListener('abort', onAbort);
  spec.finish?.removeEventListener('abort', onFinish);

  // Ended by the consumer only if its request tore something down — a child that exited 0 on
  // its own meanwhile (its zombie signalled) was not ended by it.
  const cleanExit = exitInfo?.code === 0 && exitInfo.signal === null;
  const finished = requested === 'finished' && teardown.signalled.length > 0 && !cleanExit;
  const reason: SettleReason = requested !== undefined && requested !== 'finished' ? requested : exitInfo?.signal ? 'signaled' : 'exited';
  const execution: Execution = {
    reason,
    exitCode: exitInfo?.code ?? null,
    signal: exitInfo?.signal ?? null,
    pid,
    durationMs: Math.round(monotonicMs() - startedAt),
    ...fixed,
    ...ownershipFields(),
    teardown: { ...teardown, heldPipe },
    ...(firstError ? { error: firstError } : {}),
    ...(requested === 'interrupted' && interruptSignal ? { interruptSignal } : {}),
    ...(finished ? { endedBy: 'consumer' as const } : {}),
    bytesIn,
    bytesOut: outputs.bytesOut,
  };
  emit({ type: 'settled', execution });
  return { execution, consumed: result, stderr: outputs.stderr, stderrTruncated: outputs.stderrTruncated };
}

// The signal an AbortSignal's reason names (`'SIGTERM'` or `{signal: 'SIGTERM'}`), if any.
function signalOf(reason: unknown): NodeJS.Signals | undefined {
  const name = typeof reason === 'string' ? reason : (reason as { signal?: unknown } | null)?.signal;
  return typeof name === 'string' && name in constants.signals ? (name as NodeJS.Signals) : undefined;
}

function spawnError(argv: readonly string[], cause: unknown): TransportError {
  const code = codeOf(cause) ?? 'EINVAL';
  return { code, where: 'spawn', message: `cannot run ${JSON.stringify(argv[0] ?? '')}: ${messageOf(cause)}`, cause };
}

// A prompt failure as a transport error. Node destroys the child's stdin when the child
// exits; a write cut off that way is the same broken pipe as EPIPE.
function promptError(failure: PromptFailure, childExited: boolean): TransportError {
  const code = codeOf(failure.error) ?? 'EIO';
  if (failure.stage === 'read') {
    return { code, where: 'input', message: `reading the input: ${messageOf(failure.error)}`, cause: failure.error };
  }
  if (code === 'ERR_STREAM_DESTROYED' && childExited) {
    return {
      code: 'EPIPE',
      where: 'stdin',
      message: 'writing the prompt: the child exited before reading all of it',
      cause: failure.error,
    };
  }
  return { code, where: 'stdin', message: `writing the prompt: ${messageOf(failure.error)}`, cause: failure.error };
}

// A signal Node can send: its exact name (`SIGTERM`), never a number or another spelling.
function isSignalName(value: unknown): value is NodeJS.Signals {
  return typeof value === 'string' && Object.hasOwn(constants.signals, value);
}

// A duration a caller may pass: a finite number of milliseconds, 0 or more (any length).
function isMilliseconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
