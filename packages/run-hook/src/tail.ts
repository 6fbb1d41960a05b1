import { once } from 'node:events';
import { Writable, type Readable } from 'node:stream';

/** How much of each hook stream an outcome keeps as evidence. */
export const HOOK_TAIL_BYTES = 8 * 1024;

/**
 * Keeps the last `limit` bytes written to it, in bounded memory however much arrives.
 */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private held = 0;
  /** Every byte ever written, including the ones dropped from the front. */
  total = 0;
  /** The last byte written, or undefined before any (the CLI uses it to end a line). */
  lastByte: number | undefined;

  constructor(private readonly limit = HOOK_TAIL_BYTES) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.total += chunk.length;
    this.lastByte = chunk[chunk.length - 1];
    const kept = chunk.length > this.limit ? chunk.subarray(chunk.length - this.limit) : chunk;
    this.chunks.push(Buffer.from(kept));
    this.held += kept.length;
    while (this.held - this.chunks[0]!.length >= this.limit) this.held -= this.chunks.shift()!.length;
  }

  bytes(): Buffer {
    const all = Buffer.concat(this.chunks);
    return all.length > this.limit ? all.subarray(all.length - this.limit) : all;
  }

  // The tail as text; a multi-byte character cut by the window's start is dropped, not garbled.
  text(): string {
    let bytes = this.bytes();
    if (this.total > bytes.length) {
      let skip = 0;
      while (skip < bytes.length && skip < 3 && (bytes[skip]! & 0xc0) === 0x80) skip++;
      bytes = bytes.subarray(skip);
    }
    return bytes.toString('utf8');
  }
}

/**
 * A writable that keeps a tail and, when given a destination, passes every byte on to it
 * (the CLI's passthrough), honouring the destination's backpressure. A destination that
 * fails (a closed pipe, a gone terminal) is dropped and the tail goes on: an observer never
 * changes a hook's outcome.
 */
export class TailSink extends Writable {
  readonly tail: TailBuffer;
  /** The destination failed (`run-hook -- cmd | head -1`) and was dropped. */
  broken = false;
  private destination: NodeJS.WritableStream | undefined;

  constructor(destination?: NodeJS.WritableStream, limit = HOOK_TAIL_BYTES) {
    super();
    this.tail = new TailBuffer(limit);
    this.destination = destination;
    destination?.on('error', this.dropDestination);
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
    const destination = this.destination;
    if (!destination) return false;
    try {
      return !destination.write(chunk);
    } catch {
      this.dropDestination();
      return false;
    }
  }

  // Resolves when the destination drained, failed or closed (or `gone` resolves).
  async drained(gone?: Promise<unknown>): Promise<void> {
    const destination = this.destination;
    if (!destination) return;
    const controller = new AbortController();
    const { signal } = controller;
    try {
      await Promise.race([
        once(destination, 'drain', { signal }),
        once(destination, 'close', { signal }),
        once(destination, 'error', { signal }),
        ...(gone ? [gone] : []),
      ]);
    } catch {
      // aborted or errored: either way we stop waiting
    } finally {
      controller.abort();
    }
  }

  private readonly dropDestination = (): void => {
    const destination = this.destination;
    if (destination) this.broken = true;
    this.destination = undefined;
    destination?.removeListener('error', this.dropDestination);
    // A late EPIPE from a write already in flight must not crash the process.
    destination?.on('error', () => {});
  };
}

/**
 * Reads a hook's stdout into a sink's tail (and its passthrough), waiting for a congested
 * destination unless the source goes away first: settle ends the source when the hook is
 * torn down, and a stuck reader of our stdout must never hold a deadline open. When the
 * passthrough breaks (`run-hook -- cmd | head -1`) it stops reading, so the hook sees EPIPE
 * as it would have without us in the pipe. Never throws: what arrived before a teardown is
 * the evidence, the outcome says why it stopped.
 */
export async function drainInto(source: Readable, sink: TailSink): Promise<'done' | 'broken'> {
  const gone = once(source, 'close').catch(() => {});
  try {
    for await (const chunk of source) {
      sink.tail.push(chunk as Buffer);
      if (sink.passOn(chunk as Buffer)) await sink.drained(gone);
      if (sink.broken) return 'broken';
    }
  } catch {
    // the source was destroyed under us: the hook is settled and nothing more will come
  }
  return sink.broken ? 'broken' : 'done';
}
