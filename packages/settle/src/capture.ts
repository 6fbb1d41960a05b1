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

// Reads a stream to its end, keeping the first `limit` bytes.
async function collect(stream: Readable, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let truncated = false;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    const room = limit - kept;
    if (buffer.length > room) truncated = true;
    if (room <= 0) continue;
    const part = buffer.length > room ? buffer.subarray(0, room) : buffer;
    chunks.push(part);
    kept += part.length;
  }
  return { bytes: Buffer.concat(chunks), truncated };
}
