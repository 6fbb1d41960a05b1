import { once } from 'node:events';
import { Writable, type Readable } from 'node:stream';
import { BreakableDestination, TailBuffer } from '@runplan/common';

export { TailBuffer };

/** How much of each hook stream an outcome keeps as evidence. */
export const HOOK_TAIL_BYTES = 8 * 1024;

/**
 * A writable that keeps a tail and, when given a destination, passes every byte on to it
 * (the CLI's passthrough), honouring the destination's backpressure. A destination that
 * fails (a closed pipe, a gone terminal) is dropped and the tail goes on: an observer never
 * changes a hook's outcome.
 */
export class TailSink extends Writable {
  readonly tail: TailBuffer;
  private readonly destination: BreakableDestination | undefined;

  constructor(destination?: NodeJS.WritableStream, limit = HOOK_TAIL_BYTES) {
    super();
    this.tail = new TailBuffer(limit);
    this.destination = destination !== undefined ? new BreakableDestination(destination) : undefined;
  }

  /** The destination failed (`run-hook -- cmd | head -1`) and was dropped. */
  get broken(): boolean {
    return this.destination?.broken ?? false;
  }

  /** Why the destination failed: EPIPE for a reader gone, ENOSPC for a full disk, and so on */
  get error(): Error | undefined {
    return this.destination?.error;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.tail.push(chunk);
    if (!this.passOn(chunk)) {
      callback();
      return;
    }
    void this.drained().then(() => callback());
  }

  // Writes a chunk on to the destination; true when the destination asks us to wait.
  passOn(chunk: Buffer): boolean {
    return this.destination?.write(chunk) ?? false;
  }

  // Resolves when the destination drained, failed or closed (or `gone` resolves).
  async drained(gone?: Promise<unknown>): Promise<void> {
    await this.destination?.drained(gone);
  }
}

/**
 * Reads a hook's stdout into a sink's tail (and its passthrough), waiting for a congested
 * destination unless the source goes away first: settle ends the source when the hook is
 * torn down, and a stuck reader of our stdout must never hold a deadline open. When the
 * passthrough breaks (`run-hook -- cmd | head -1`) it stops reading, so the hook sees EPIPE
 * as it would have without us in the pipe. Never throws: what arrived before a teardown is
 * the evidence, the outcome says why it stopped.
 */
// `onBroken` runs as it stops for a broken sink, before the source is closed (settle's
// passThrough says why: a socket closed under a writer gives ECONNRESET, not SIGPIPE).
export async function drainInto(source: Readable, sink: TailSink, onBroken: () => void = () => {}): Promise<'done' | 'broken'> {
  const gone = once(source, 'close').catch(() => {});
  try {
    for await (const chunk of source) {
      sink.tail.push(chunk as Buffer);
      if (sink.passOn(chunk as Buffer)) await sink.drained(gone);
      if (sink.broken) {
        onBroken();
        return 'broken';
      }
    }
  } catch {
    // the source was destroyed under us: the hook is settled and nothing more will come
  }
  return sink.broken ? 'broken' : 'done';
}
