import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';

/**
 * Copies the child's stdout to a writable byte for byte, honouring backpressure. When the
 * destination breaks (`settle -- cmd | head -1`) it stops and says `broken`; it never
 * throws (observers never change outcomes).
 */
export async function passThrough(source: Readable, destination: Writable): Promise<'done' | 'broken'> {
  let broken = false;
  const onError = () => {
    broken = true;
  };
  destination.on('error', onError);
  try {
    for await (const chunk of source) {
      if (broken || destination.destroyed) return 'broken';
      if (!destination.write(chunk as Buffer)) await drainOrGone(source, destination);
    }
  } catch {
    // the source was destroyed under us: the child is settled and nothing more will come
  } finally {
    destination.off('error', onError);
    destination.on('error', () => {}); // a late EPIPE from the last write must not crash us
  }
  return broken ? 'broken' : 'done';
}

// Waits for the destination to drain, or for either side to go away.
async function drainOrGone(source: Readable, destination: Writable): Promise<void> {
  const controller = new AbortController();
  const { signal } = controller;
  try {
    await Promise.race([
      once(destination, 'drain', { signal }),
      once(destination, 'close', { signal }),
      once(destination, 'error', { signal }),
      once(source, 'close', { signal }),
    ]);
  } catch {
    // aborted or errored: either way we stop waiting
  } finally {
    controller.abort();
  }
}
