import { runChild } from './run.js';
import type { Consumer, Execution, SettleSpec } from './types.js';

/** Default cap on stderr captured by stream() (`stderr: 'capture'`). */
export const streamStderrLimit = 1024 * 1024;

export interface Streamed<S> {
  execution: Execution;
  /** The consumer's state whenever it returned (normally or with an Error); undefined when it threw or never ran. */
  state: S | undefined;
  /** stderr when the spec asked for `capture` (first 1 MiB). */
  stderr?: Buffer;
}

/**
 * Runs a command whose stdout a consumer reads while the prompt is written to stdin.
 * Returns only after the child is reaped or its owned tree torn down AND every I/O worker
 * (prompt writer, consumer, stderr reader) has finished. `execution.error` is the FIRST
 * transport error (EPIPE on the prompt, a reader error, the consumer's error) with its cause.
 */
export async function stream<S>(spec: SettleSpec, initialState: S, consume: Consumer<S>): Promise<Streamed<S>> {
  const state = initialState;
  const outcome = await runChild(spec, { stderrDefault: 'inherit', stderrLimit: streamStderrLimit }, (stdout) => consume(stdout, state));
  const returned = outcome.consumed?.kind === 'returned';
  return {
    execution: outcome.execution,
    state: returned ? state : undefined,
    ...((spec.stderr ?? 'inherit') === 'capture' ? { stderr: outcome.stderr } : {}),
  };
}
