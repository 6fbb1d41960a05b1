import type { ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { StderrPolicy } from './types.js';

/**
 * The child's stdout and stderr as settle reads them: stdout counted and handed to the
 * consumer through a PassThrough we can end ourselves (so a consumer sees a clean EOF even
 * when the real pipe never closes); stderr captured up to a limit, piped to a caller's
 * writable, or not ours at all (inherited or ignored).
 */
export class ChildOutputs {
  /** What the consumer reads. Ended by us at EOF, or when we give up on the pipe. */
  readonly forConsumer = new PassThrough();
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
    this.forConsumer.on('error', () => {});
    const stdout = child.stdout!;
    stdout.on('data', (chunk: Buffer) => {
      this.bytesOut += chunk.length;
      onStdout();
    });
    stdout.pipe(this.forConsumer, { end: false });
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
    const stdout = this.child.stdout!;
    stdout.unpipe(this.forConsumer);
    stdout.destroy();
    this.forConsumer.resume();
  }

  // Gives up on whatever is still open and ends the consumer's stream with a clean EOF.
  closeOut(): void {
    const stdout = this.child.stdout!;
    stdout.unpipe(this.forConsumer);
    stdout.destroy();
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
    if (!this.forConsumer.writableEnded) this.forConsumer.end();
    if (this.finished) this.wake();
  }

  private endStderr(): void {
    if (this.stderrDone) return;
    this.stderrDone = true;
    if (this.finished) this.wake();
  }
}
