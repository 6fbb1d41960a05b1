import type { Readable } from 'node:stream';
import { runChild } from './run.js';
import type { Captured, SettleSpec } from './types.js';

/** Default cap on each captured stream; past it the bytes are read and dropped (never a blocked child). */
export const defaultMaxBuffer = 100 * 1024 * 1024;

// Runs a command to settlement and collects stdout and stderr. A nonzero exit is data.
export async function capture(spec: SettleSpec & { maxBuffer?: number }): Promise<Captured> {
  const maxBuffer = spec.maxBuffer ?? defaultMaxBuffer;
  const outcome = await runChild(spec, { stderrDefault: 'capture', stderrLimit: maxBuffer }, (stdout) => collect(stdout, maxBuffer));
  const collected = outcome.consumed?.kind === 'returned' ? outcome.consumed.value : { bytes: Buffer.alloc(0), truncated: false };
  return {
    ...outcome.execution,
    stdout: collected.bytes,
    stderr: outcome.stderr,
    stdoutTruncated: collected.truncated,
    stderrTruncated: outcome.stderrTruncated,
  };
}

// Reads a stream to its end, keeping the first `limit` bytes. Events rather than `for await`:
// an async iterator costs a promise per chunk and a stream-finished watcher per call. A
// stream destroyed before its end rejects, as `for await` would.
function collect(stream: Readable, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let ended = false;
    stream.on('data', (buffer: Buffer) => {
      const room = limit - kept;
      if (buffer.length > room) truncated = true;
      if (room <= 0) return;
      const part = buffer.length > room ? buffer.subarray(0, room) : buffer;
      chunks.push(part);
      kept += part.length;
    });
    stream.once('end', () => {
      ended = true;
      resolve({ bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), truncated });
    });
    stream.once('error', reject);
    stream.once('close', () => {
      if (!ended) reject(new Error('stdout closed before its end'));
    });
  });
}
