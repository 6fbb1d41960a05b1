import type { ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import type { StderrPolicy } from './types.js';

/** How much stdout may wait in the consumer's stream before the pipe is paused. */
const consumerBufferBytes = 64 * 1024;

/**
 * The child's stdout and stderr as settle reads them: stdout counted and handed to the
 * consumer through a stream we can end ourselves (so a consumer sees a clean EOF even
 * when the real pipe never closes); stderr captured up to a limit, piped to a caller's
 * writable, or not ours at all (inherited or ignored).
 *
 * The consumer's stream is a plain Readable fed from stdout's `data` events, paused and
 * resumed for backpressure: one hop per chunk, with none of a Transform's writable side
 * (a PassThrough cost ~20 % more reader CPU per byte than reading the pipe directly).
 */
export class ChildOutputs {
  /** What the consumer reads. Ended by us at EOF, or when we give up on the pipe. */
  readonly forConsumer: Readable;
  bytesOut = 0;
  bytesErr = 0;
  stderrTruncated = false;
  stdoutDone = false;
  stderrDone: boolean;
  /** Resolves when both pipes reached EOF (or were closed by us). */
  readonly done: Promise<void>;
  private wake: () => void = () => {};
  private readonly stderrChunks: Buffer[] = [];
  private stderrKept = 0;

  constructor(
    private readonly child: ChildProcess,
    stderrPolicy: StderrPolicy,
    stderrLimit: number,
    onStdout: () => void,
  ) {
    this.done = new Promise<void>((resolve) => (this.wake = resolve));
    const stdout = child.stdout!;
    // The consumer asking for more resumes the pipe; a full buffer pauses it.
    const forConsumer = new Readable({ highWaterMark: consumerBufferBytes, read: () => void stdout.resume() });
    this.forConsumer = forConsumer;
    forConsumer.on('error', () => {});
    // A consumer that destroys its stream stops taking bytes: read and drop them, never block the child.
    forConsumer.once('close', () => void stdout.resume());
    stdout.on('data', (chunk: Buffer) => {
      this.bytesOut += chunk.length;
      onStdout();
      if (this.stdoutDone || forConsumer.destroyed) return;
      if (!forConsumer.push(chunk)) stdout.pause();
    });
    stdout.once('end', () => this.endStdout());
    stdout.once('close', () => this.endStdout());

    this.stderrDone = !child.stderr;
    const stderr = child.stderr;
    if (!stderr) return;
    stderr.on('data', (chunk: Buffer) => {
      this.bytesErr += chunk.length;
      if (stderrPolicy === 'capture') this.keepStderr(chunk, stderrLimit);
    });
    if (typeof stderrPolicy === 'object') {
      const sink = stderrPolicy;
      // A broken sink must not block the child: drop stderr from then on.
      sink.once('error', () => {
        stderr.unpipe(sink);
        stderr.resume();
      });
      stderr.pipe(sink, { end: false });
    }
    stderr.once('end', () => this.endStderr());
    stderr.once('close', () => this.endStderr());
  }

  get finished(): boolean {
    return this.stdoutDone && this.stderrDone;
  }

  get bytesSeen(): number {
    return this.bytesOut + this.bytesErr;
  }

  get stderr(): Buffer {
    return Buffer.concat(this.stderrChunks);
  }

  // The consumer finished before EOF: nobody reads stdout any more, so we stop reading too
  // and the child sees a closed pipe, as under `| head`.
  stopReadingStdout(): void {
    if (this.stdoutDone) return;
    this.child.stdout!.destroy();
    this.forConsumer.resume();
  }

  // Gives up on whatever is still open and ends the consumer's stream with a clean EOF.
  closeOut(): void {
    this.child.stdout!.destroy();
    this.child.stderr?.destroy();
    this.endStdout();
    this.endStderr();
  }

  private keepStderr(chunk: Buffer, limit: number): void {
    const room = limit - this.stderrKept;
    if (chunk.length > room) this.stderrTruncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.stderrChunks.push(kept);
    this.stderrKept += kept.length;
  }

  private endStdout(): void {
    if (this.stdoutDone) return;
    this.stdoutDone = true;
    if (!this.forConsumer.destroyed) this.forConsumer.push(null);
    if (this.finished) this.wake();
  }

  private endStderr(): void {
    if (this.stderrDone) return;
    this.stderrDone = true;
    if (this.finished) this.wake();
  }
}
