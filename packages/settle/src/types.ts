import type { Readable } from 'node:stream';
import type { OwnershipFallback, OwnershipKind, OwnershipMode } from './cgroup.js';
import type { ProcStat } from './identity.js';

/** Why a child settled. Who asked for termination outranks how the child died. */
export type SettleReason = 'exited' | 'signaled' | 'timed_out' | 'stalled' | 'spawn_failed' | 'interrupted';

/** What tearing down the owned tree did. */
export interface TeardownReport {
  /** none: nothing was left to end; clean: all gone after the first signal; escalated: KILL was needed; failed: survivors. */
  result: 'none' | 'clean' | 'escalated' | 'failed';
  /** Pids we signalled, each verified by pid + start time just before the signal. */
  signalled: number[];
  /** Pids still alive after KILL and a bounded reap. */
  survivors: number[];
  /** stdout/stderr were still held open by a descendant `grace` after the child exited. */
  heldPipe: boolean;
}

/** Where a transport error happened, so a report can say "EPIPE writing the prompt". */
export type TransportErrorSource = 'spawn' | 'cwd' | 'input' | 'stdin' | 'stdout' | 'stderr' | 'consumer' | 'spec' | 'proc' | 'cgroup';

/** The first I/O or startup failure of a call; later ones never replace it. */
export interface TransportError {
  /** errno-style code (`EPIPE`, `ENOENT`, `EACCES`) or a settle code (`consumer_error`, `consumer_threw`). */
  code: string;
  message: string;
  /** Where it happened; settle always sets it (optional so callers may build their own). */
  where?: TransportErrorSource;
  cause?: unknown;
}

/** The settled result of one child process. The same fields whatever happened, so callers branch on data. */
export interface Execution {
  reason: SettleReason;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  pid: number | undefined;
  durationMs: number;
  deadlineMs?: number;
  graceMs: number;
  stallMs?: number;
  teardown: TeardownReport;
  error?: TransportError;
  /** Bytes of input the child's stdin pipe accepted (0 when stdin is inherited or empty). */
  bytesIn: number;
  /** Bytes read from the child's stdout. */
  bytesOut: number;
  /** settle's own per-call tag, carried in the child's environment as `RUNPLAN_OWNER_<tag>=1`. */
  tag: string;
  ownerTag?: string;
  /** The consumer ended the child (`finish`): its request signalled processes, and the child did not exit 0 on its own. */
  endedBy?: 'consumer';
  /** For `interrupted`: the signal named by the AbortSignal's reason (e.g. `'SIGTERM'`), when it named one. */
  interruptSignal?: NodeJS.Signals;
  /** How the child was owned: its own cgroup, or its process group plus the tag (README, "Ownership"). */
  ownership: OwnershipKind;
  /** Why `auto` fell back to `group+tag` (no cgroup v2, not writable, …); absent otherwise. */
  ownershipFallback?: OwnershipFallback;
  /** The cgroup the child ran in (removed by the time of the settlement unless a teardown failed). */
  cgroup?: string;
}

/** What settle exposes of /proc; tests inject a fake to prove a reused pid is never signalled. */
export interface ProcSource {
  listPids(): number[];
  readStat(pid: number): ProcStat | undefined;
  readEnviron(pid: number): Buffer | undefined;
  /** The `pipe:[inode]`-style targets of a process's open fds (for held-pipe detection). */
  readFdTargets(pid: number): string[];
  /** Where fd `fd` of a process points, or undefined when it is closed or the process gone. */
  readFdTarget(pid: number, fd: number): string | undefined;
}

/**
 * Who holds the child's end of our pipes: their pids, or `'unknown'` when the child closed
 * its ends (or exited) before settle could read them, so no pipe could be matched.
 */
export type PipeHolders = number[] | 'unknown';

export type SettleInput = string | Buffer | Uint8Array | { file: string } | 'inherit';
export type StderrPolicy = 'inherit' | 'capture' | 'ignore' | NodeJS.WritableStream;

export interface SettleSpec {
  /** Command and arguments; never run through a shell. */
  argv: readonly string[];
  cwd?: string;
  /** Overrides over the base environment; `undefined` deletes a variable. */
  env?: Record<string, string | undefined>;
  /** Default `process.env`. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Default: empty stdin (/dev/null). A file is streamed, never read whole. */
  input?: SettleInput;
  /** Default `capture` in capture(), `inherit` in stream(). */
  stderr?: StderrPolicy;
  /** Any length (timers chain past setTimeout's 24.8 days); 0 or absent: none. */
  deadlineMs?: number;
  /** How long a signalled tree (or a post-exit drain) may take before escalation. Default 5000. */
  graceMs?: number;
  /** The wait between a teardown's first signal and KILL alone (GNU `--kill-after`); default graceMs. 0: KILL at once (GNU's 0 sends no KILL). */
  killAfterMs?: number;
  /** No stdout for this long is torn down like a deadline, reason `stalled`; 0 or absent: none. */
  stallMs?: number;
  /** First signal of a teardown, a name Node knows (`'SIGTERM'`, not `'sigterm'`); default SIGTERM. */
  killSignal?: NodeJS.Signals;
  /** Aborting it yields the canonical `interrupted` outcome after owned teardown. */
  signal?: AbortSignal;
  /**
   * The consumer's end of the child (stream only): aborting it tears the owned tree down as at
   * a deadline, but the settlement is how the child then died (`exited` / `signaled`) with
   * `endedBy: "consumer"` — the consumer saw the child's last word (an agent that hangs after
   * its final line) and the teardown is recorded in `teardown`, not as a failure.
   */
  finish?: AbortSignal;
  /** An extra tag from the caller (one per attempt), for teardownByTag after a crash. */
  ownerTag?: string;
  /**
   * `auto` (default): a fresh cgroup per child when a writable cgroup v2 place exists, else the
   * process group plus tag (saying why); `cgroup`: a cgroup or spawn_failed (`where: 'cgroup'`);
   * `group+tag`: never a cgroup.
   */
  ownership?: OwnershipMode;
  /** The cgroup v2 directory to make the child's cgroup in; default: our own cgroup's directory. */
  cgroupParent?: string;
  onEvent?: (event: SettleEvent) => void;
  /** Injected /proc reader (tests). */
  proc?: Partial<ProcSource>;
}

/** What a settle call reports while it runs; observers never change the outcome. */
export type SettleEvent =
  | { type: 'ownership'; ownership: OwnershipKind; cgroup?: string; fallback?: OwnershipFallback }
  | { type: 'spawned'; pid: number; tag: string; argv: readonly string[] }
  | { type: 'spawn-failed'; error: TransportError }
  | { type: 'exited'; exitCode: number | null; signal: NodeJS.Signals | null }
  | { type: 'deadline'; deadlineMs: number }
  | { type: 'stall'; stallMs: number }
  | { type: 'interrupt' }
  | { type: 'transport-error'; error: TransportError }
  | { type: 'held-pipe'; holders: PipeHolders }
  | { type: 'teardown-started'; why: 'timed_out' | 'stalled' | 'interrupted' | 'finished' | 'leftovers'; signal: NodeJS.Signals }
  | { type: 'signalled'; pid: number; signal: NodeJS.Signals }
  | { type: 'settled'; execution: Execution };

export interface Captured extends Execution {
  stdout: Buffer;
  stderr: Buffer;
  /** stdout exceeded maxBuffer; the first maxBuffer bytes are kept, the rest was read and dropped. */
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

/** A stream() consumer: read stdout, mutate state; return an Error to record it while keeping state. */
export type Consumer<S> = (stdout: Readable, state: S) => Promise<void | Error>;
