import { once } from 'node:events';

/**
 * A destination that may break under us — a closed pipe (`tool … | head -1`), a gone
 * terminal, a file on a full disk — written with its backpressure honoured. The first error
 * (thrown by `write` or emitted) marks it broken and it is dropped: nothing more is written,
 * nobody waits on it, and a late EPIPE from a write already in flight cannot crash the
 * process. Observers never change outcomes; the caller reads `broken`/`error` and decides.
 * One copier for settle's passthrough, run-hook's, the transcript copy and the CLIs' output.
 */
export class BreakableDestination {
  /** The first error it gave, once it broke. */
  error: Error | undefined;
  private out: NodeJS.WritableStream | undefined;

  constructor(out: NodeJS.WritableStream) {
    this.out = out;
    out.on('error', this.broke);
  }

  get broken(): boolean {
    return this.error !== undefined;
  }

  // Writes a chunk; true when the destination asks us to wait for 'drain' before the next.
  write(chunk: Buffer | string): boolean {
    const out = this.out;
    if (out === undefined) return false;
    if ((out as { destroyed?: boolean }).destroyed === true) {
      this.broke(new Error('the destination was closed'));
      return false;
    }
    try {
      return !out.write(chunk);
    } catch (e) {
      this.broke(e);
      return false;
    }
  }

  // Resolves when the destination drained, broke or closed, or when `gone` settles first
  // (the source went away: a stuck reader must never hold a deadline open).
  async drained(gone?: Promise<unknown>): Promise<void> {
    const out = this.out;
    if (out === undefined) return;
    const controller = new AbortController();
    const { signal } = controller;
    try {
      await Promise.race([
        once(out as NodeJS.EventEmitter, 'drain', { signal }),
        once(out as NodeJS.EventEmitter, 'close', { signal }),
        once(out as NodeJS.EventEmitter, 'error', { signal }),
        ...(gone ? [gone] : []),
      ]);
    } catch {
      // Aborted or errored: either way we stop waiting.
    } finally {
      controller.abort();
    }
  }

  // Writes a chunk and waits while the destination asks us to (unless `gone` settles first).
  async send(chunk: Buffer | string, gone?: Promise<unknown>): Promise<void> {
    if (this.write(chunk)) await this.drained(gone);
  }

  private readonly broke = (e: unknown): void => {
    this.error ??= e instanceof Error ? e : new Error(String(e));
    const out = this.out;
    this.out = undefined;
    if (out === undefined) return;
    out.removeListener('error', this.broke);
    out.on('error', () => {});
  };
}
