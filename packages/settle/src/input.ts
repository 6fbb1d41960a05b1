import { createReadStream } from 'node:fs';
import type { Writable } from 'node:stream';

const chunkBytes = 64 * 1024;

/** A prompt source opened before the spawn, so a missing file is a startup failure, not an EPIPE. */
export type PromptSource = { kind: 'bytes'; bytes: Buffer } | { kind: 'file'; fd: number; path: string };

// The prompt as a sequence of chunks: a file is streamed (memory stays bounded), bytes are sliced without copying.
async function* chunksOf(source: PromptSource): AsyncGenerator<Buffer> {
  if (source.kind === 'bytes') {
    for (let at = 0; at < source.bytes.length; at += chunkBytes) yield source.bytes.subarray(at, at + chunkBytes);
    return;
  }
  const file = createReadStream('', { fd: source.fd, highWaterMark: chunkBytes, autoClose: true });
  try {
    for await (const chunk of file) yield chunk as Buffer;
  } finally {
    file.destroy();
  }
}

export type PromptFailure = { stage: 'read' | 'write'; error: unknown };

/**
 * Writes the prompt to the child's stdin one chunk at a time, waiting for each write to
 * reach the pipe, then closes it. Resolves (never rejects) with the failure, if any; a
 * destroyed stdin ends it, so it can always be joined.
 */
export async function feedPrompt(
  source: PromptSource,
  stdin: Writable,
  accepted: (bytes: number) => void,
): Promise<PromptFailure | undefined> {
  const chunks = chunksOf(source);
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (error) {
        return { stage: 'read', error };
      }
      if (next.done) break;
      await writeChunk(stdin, next.value);
      accepted(next.value.length);
    }
    await new Promise<void>((resolve, reject) => {
      stdin.once('close', resolve);
      stdin.end((error?: Error | null) => (error ? reject(error) : resolve()));
    });
    return undefined;
  } catch (error) {
    return { stage: 'write', error };
  } finally {
    await chunks.return(undefined).catch(() => undefined);
  }
}

// One write that settles on its callback, or when the stream is destroyed under it.
function writeChunk(stdin: Writable, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stdin.destroyed || stdin.writableEnded) {
      reject(Object.assign(new Error('stdin is closed'), { code: 'ERR_STREAM_DESTROYED' }));
      return;
    }
    const onClose = () => reject(Object.assign(new Error('stdin closed during write'), { code: 'ERR_STREAM_DESTROYED' }));
    stdin.once('close', onClose);
    stdin.write(chunk, (error) => {
      stdin.off('close', onClose);
      if (error) reject(error);
      else resolve();
    });
  });
}
