import type { StdioOptions } from 'node:child_process';
import type { Readable } from 'node:stream';
import { Endgame, type ExitInfo } from './endgame.js';
import { feedPrompt, type PromptFailure } from './input.js';
import { launch, spawnError } from './launch.js';
import type { Ownership } from './owned.js';
import { startConsumer, type Consumed } from './consumer.js';
import { ChildOutputs } from './outputs.js';
import { joinReady } from './cgroup.js';
import { releaseCgroup, type OwnershipChoice } from './ownership-choice.js';
import { FirstError, listenForErrors, promptError } from './first-error.js';
import { preflight, releasePrompt } from './preflight.js';
import { procMismatch, procSource } from './procfs.js';
import { Requests, signalOf } from './requests.js';
import { specProblem } from './spec-check.js';
import { newOwnerTag } from './tag.js';
import { noTeardown } from './teardown.js';
import type { Execution, SettleEvent, SettleReason, SettleSpec, TeardownReport, TransportError } from './types.js';
import { unlessAborted, within } from './wait.js';

// Monotonic milliseconds (not node:perf_hooks: loading it allocates ~300 KB, enough to cost
// the settle CLI a garbage collection during start-up).
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

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
 * (the two middle rows are `Endgame`). Settlement is driven by `exit`/`error`, never by
 * `close`: `close` waits for every stdio stream, and a grandchild holding the pipe can keep
 * it from ever arriving. Every wait is bounded, so this always returns.
 */
export async function runChild<R>(
  spec: SettleSpec,
  options: RunOptions,
  consume: (stdout: Readable) => Promise<R>,
): Promise<RunOutcome<R>> {
  const startedAt = monotonicMs();
  const tag = newOwnerTag();
  const graceMs = spec.graceMs ?? defaultGraceMs;
  const emit = (event: SettleEvent) => {
    try {
      spec.onEvent?.(event);
    } catch {
      // observers never change outcomes
    }
  };
  // How the child is owned, as far as decided (the settlement reports it whatever happened).
  let owning: OwnershipChoice = { kind: 'group+tag' };
  const common = () => commonFields(spec, { tag, graceMs, owning, durationMs: Math.round(monotonicMs() - startedAt) });
  const unstarted = (reason: SettleReason, error?: TransportError, interruptSignal?: NodeJS.Signals): RunOutcome<R> => {
    const execution: Execution = {
      reason,
      exitCode: null,
      signal: null,
      pid: undefined,
      ...common(),
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

  const invalid = specProblem(spec);
  if (invalid) return unstarted('spawn_failed', invalid);
  const wrongProc = spec.proc === undefined ? procMismatch() : undefined;
  if (wrongProc !== undefined) return unstarted('spawn_failed', { code: 'proc_mismatch', where: 'proc', message: wrongProc });
  // A warm-up of the cgroup join in flight moves settle home: it must land before the join
  // (cgroup.ts, primeJoin). Another may have started while this call waited (another call's
  // code runs first); from the last check to the spawn nothing waits, so none can start then.
  // The wait needs the thread pool; an abort ends it, and nothing is spawned.
  if (spec.ownership !== 'group+tag')
    for (let p = joinReady(); p !== undefined; p = joinReady()) if (!(await unlessAborted(p, spec.signal))) break;
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
  const launched = launch(spec, { stdio, tag, tags, mode: spec.ownership ?? 'auto' }, emit);
  owning = launched.owning;
  if (!launched.ok) {
    releasePrompt(prompt);
    return unstarted('spawn_failed', launched.error);
  }
  const child = launched.child;
  const cgroup = launched.owning.kind === 'cgroup' ? launched.owning.cgroup : undefined;

  // From here on every stream gets an error listener before anything can fail.
  const errors = new FirstError(emit);
  listenForErrors(child, errors);
  const startError = new Promise<unknown>((resolve) => child.on('error', resolve));
  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve();
    }),
  );

  const pid = child.pid;
  if (pid === undefined) {
    const cause = await startError;
    releasePrompt(prompt);
    for (const s of [child.stdin, child.stdout, child.stderr]) s?.destroy();
    if (cgroup) await releaseCgroup(cgroup);
    return unstarted('spawn_failed', spawnError(spec.argv, cause, spec.cwd));
  }

  const proc = procSource(spec.proc);
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

  const requests = new Requests(spec, emit, () => exitInfo !== undefined);
  const outputs = new ChildOutputs(child, stderrPolicy, options.stderrLimit, () => requests.sawOutput());
  const consumer = startConsumer(outputs, consume, errors);
  let bytesIn = 0;
  const fed: Promise<PromptFailure | undefined> =
    prompt && child.stdin ? feedPrompt(prompt, child.stdin, (n) => (bytesIn += n)) : Promise.resolve(undefined);
  // A prompt cut off by a teardown we asked for is its consequence, not a transport error.
  void fed.then((failure) => {
    if (failure && !errors.closingOut && !requests.requested) errors.record(promptError(failure, exitInfo !== undefined));
  });

  const deadlineAt = spec.deadlineMs ? Date.now() + spec.deadlineMs : undefined;
  const endgame = new Endgame({
    outputs,
    ownership,
    proc,
    childEnds,
    cgroup,
    requests,
    exited,
    exitInfo: () => exitInfo,
    graceMs,
    killSignal: spec.killSignal ?? 'SIGTERM',
    killAfterMs: spec.killAfterMs ?? graceMs,
    deadlineAt,
    emit,
  });
  const first = await Promise.race([exited.then(() => 'exit' as const), requests.termination.then(() => 'terminate' as const)]);
  requests.stopTimers();
  const teardown: TeardownReport = first === 'terminate' && !exitInfo ? await endgame.afterRequest() : await endgame.afterExit();

  // Close out: destroy what is left of the pipes, end the consumer's stream, join every worker.
  errors.closingOut = true;
  outputs.closeOut();
  child.stdin?.destroy();
  if (!exitInfo) child.unref();
  // The consumer reads what is left at its own pace after a normal exit (until the deadline,
  // if any, or an interruption); after a teardown it gets `grace`, then its stream is
  // destroyed under it.
  if (!requests.requested) {
    const finishedOrInterrupted = Promise.race([consumer.result, requests.termination]);
    if (deadlineAt === undefined) await finishedOrInterrupted;
    else await within(finishedOrInterrupted, Math.max(deadlineAt - Date.now(), graceMs));
  }
  if (!consumer.done) await within(consumer.result, graceMs);
  if (!consumer.done) outputs.forConsumer.destroy(new Error('settle: the consumer did not finish reading in time after the child settled'));
  const result = await consumer.result;
  await fed;
  if (cgroup && !endgame.cgroupRemoved) await releaseCgroup(cgroup);
  requests.close();

  // Ended by the consumer only if its request tore something down — a child that exited 0 on
  // its own meanwhile (its zombie signalled) was not ended by it.
  const { requested, interruptSignal } = requests;
  const exit = exitInfo as ExitInfo | undefined; // assigned by the exit listener
  const cleanExit = exit?.code === 0 && exit.signal === null;
  const finished = requested === 'finished' && teardown.signalled.length > 0 && !cleanExit;
  const reason: SettleReason = requested !== undefined && requested !== 'finished' ? requested : exit?.signal ? 'signaled' : 'exited';
  const execution: Execution = {
    reason,
    exitCode: exit?.code ?? null,
    signal: exit?.signal ?? null,
    pid,
    ...common(),
    teardown: { ...teardown, heldPipe: endgame.heldPipe },
    ...(errors.first ? { error: errors.first } : {}),
    ...(requested === 'interrupted' && interruptSignal ? { interruptSignal } : {}),
    ...(finished ? { endedBy: 'consumer' as const } : {}),
    bytesIn,
    bytesOut: outputs.bytesOut,
  };
  emit({ type: 'settled', execution });
  return { execution, consumed: result, stderr: outputs.stderr, stderrTruncated: outputs.stderrTruncated };
}

// The fields every settlement carries, started or not, in the order the settlement prints them.
function commonFields(spec: SettleSpec, n: { tag: string; graceMs: number; owning: OwnershipChoice; durationMs: number }) {
  const { owning } = n;
  return {
    durationMs: n.durationMs,
    graceMs: n.graceMs,
    tag: n.tag,
    ...(spec.deadlineMs ? { deadlineMs: spec.deadlineMs } : {}),
    ...(spec.stallMs ? { stallMs: spec.stallMs } : {}),
    ...(spec.ownerTag !== undefined ? { ownerTag: spec.ownerTag } : {}),
    ownership: owning.kind === 'cgroup' ? ('cgroup' as const) : ('group+tag' as const),
    ...(owning.kind === 'group+tag' && owning.fallback ? { ownershipFallback: owning.fallback } : {}),
    ...(owning.kind === 'cgroup' ? { cgroup: owning.cgroup.path } : {}),
  };
}
