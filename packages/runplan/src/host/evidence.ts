import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { textTail as boundedText, utf8Tail, writeFileDurable } from '@runplan/common';
import { maskSecrets } from '../plan/secrets.js';

/**
 * Evidence files (transcripts, stderr, hook and gate output) with every secret value masked
 * before a byte reaches the disk. Streams mask whole lines, so a secret split across two
 * chunks is still caught; a line longer than 64 KiB is masked in pieces.
 */
const MAX_PENDING = 64 * 1024;

export class MaskingLines extends Transform {
  #pending = '';
  readonly #decoder = new StringDecoder('utf8');
  constructor(private readonly secrets: readonly string[]) {
    super();
  }
  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback): void {
    this.#pending += typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    const cut = this.#pending.lastIndexOf('\n');
    if (cut >= 0) {
      this.push(maskSecrets(this.#pending.slice(0, cut + 1), this.secrets));
      this.#pending = this.#pending.slice(cut + 1);
    } else if (this.#pending.length > MAX_PENDING) {
      this.push(maskSecrets(this.#pending, this.secrets));
      this.#pending = '';
    }
    done();
  }
  override _flush(done: TransformCallback): void {
    this.#pending += this.#decoder.end();
    if (this.#pending !== '') this.push(maskSecrets(this.#pending, this.secrets));
    this.#pending = '';
    done();
  }
}

/** A masked evidence file being written as a stream; `close()` resolves once it is on disk. */
export interface EvidenceSink {
  readonly path: string;
  readonly stream: NodeJS.WritableStream;
  /** The file's first error (ENOSPC while the transcript streams), once there was one. */
  readonly error: NodeJS.ErrnoException | undefined;
  close(): Promise<void>;
}

// Opens a masked, append-as-it-streams evidence file (mode 0600). A file that fails (a full
// disk) fails its stream too: a writer waiting for `drain` is released (it would wait
// forever), later bytes are dropped, `onError` is told once, and `close()` still resolves.
export function evidenceSink(path: string, secrets: readonly string[], onError?: (e: NodeJS.ErrnoException) => void): EvidenceSink {
  const file = createWriteStream(path, { mode: 0o600 });
  const masking = new MaskingLines(secrets);
  let error: NodeJS.ErrnoException | undefined;
  const closed = new Promise<void>((resolve) => file.once('close', () => resolve()));
  file.on('error', (e: NodeJS.ErrnoException) => {
    if (error !== undefined) return;
    error = e;
    masking.unpipe(file);
    masking.destroy(e);
    onError?.(e);
  });
  masking.on('error', () => {});
  masking.pipe(file);
  let closing: Promise<void> | undefined;
  return {
    path,
    stream: masking,
    get error() {
      return error;
    },
    close: () =>
      (closing ??= (async () => {
        if (error === undefined) masking.end();
        else file.destroy();
        await closed;
      })()),
  };
}

// Writes a whole masked evidence file atomically.
export async function writeEvidence(path: string, text: string, secrets: readonly string[]): Promise<void> {
  await writeFileDurable(path, maskSecrets(text, secrets), { mode: 0o600 });
}

// The last `bytes` of a file as text, never a character cut in half (empty when it cannot be read).
export async function fileTail(path: string, bytes = 4096): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
    const { size } = await handle.stat();
    // Up to 3 bytes more than kept, so utf8Tail can tell a cut character at the front.
    const length = Math.min(size, bytes + 3);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return utf8Tail(buffer, bytes);
  } catch {
    return '';
  } finally {
    await handle?.close();
  }
}

// The end of a text that fits in `bytes` UTF-8 bytes, never a character cut in half (journal data and fingerprints).
export function textTail(text: string, bytes = 4096): string {
  return boundedText(text, bytes);
}
