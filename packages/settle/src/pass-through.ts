import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { BreakableDestination } from '@runplan/common';

/**
 * Copies the child's stdout to a writable byte for byte, honouring backpressure. When the
 * destination breaks (`settle -- cmd | head -1`) it stops and says `broken`, with the
 * destination's error (EPIPE; ENOSPC on a full disk); it never
 * throws (observers never change outcomes). `onBroken` runs as it stops, before the source
 * is closed: the child's pipe is a socket, so a write after that close would meet
 * ECONNRESET ("Connection reset by peer") where a plain pipe gives SIGPIPE first.
 */
export async function passThrough(
  source: Readable,
  destination: Writable,
  onBroken: () => void = () => {},
): Promise<{ result: 'done' | 'broken'; error?: Error }> {
  const out = new BreakableDestination(destination);
  const gone = once(source, 'close').catch(() => {});
  try {
    for await (const chunk of source) {
      if (out.broken) {
        onBroken();
        return { result: 'broken', error: out.error };
      }
      await out.send(chunk as Buffer, gone);
    }
  } catch {
    // the source was destroyed under us: the child is settled and nothing more will come
  }
  return out.broken ? { result: 'broken', error: out.error } : { result: 'done' };
}
