import type { Readable, Writable } from 'node:stream';

// settle's own stdout and stderr: written to without dying of EPIPE, opened only once the
// command has output, and flushed (or abandoned) before settle exits.

// Writes to one of settle's own streams. A closed reader (`settle … 2>&1 | head -1`) must
// never change settle's exit code or lose its report, so the write's EPIPE is dropped.
export function say(stream: NodeJS.WriteStream, text: string): void {
  if (stream.listenerCount('error') === 0) stream.on('error', () => {});
  stream.write(text);
}

// Gives a slow reader up to `ms` (Infinity: as long as it takes) to take what we already
// wrote; false when it did not. Polls writableLength: 'drain' only fires after a write that
// returned false, and the timer also keeps the event loop alive while we wait.
export async function flushStdout(out: Writable, ms: number): Promise<boolean> {
  const flushed = () => out.writableLength === 0 || out.destroyed;
  if (flushed()) return true;
  const giveUpAt = Date.now() + ms;
  return new Promise<boolean>((resolve) => {
    const timer = setInterval(() => {
      if (flushed()) finish(true);
      else if (Date.now() >= giveUpAt) finish(false);
    }, 20);
    const finish = (result: boolean) => {
      clearInterval(timer);
      out.off('error', onError);
      resolve(result);
    };
    const onError = () => finish(true);
    out.once('error', onError);
  });
}

// Resolves true once the child's stdout has bytes to pass on, false when it ends or is
// destroyed without any. ('readable' fires for data or for the end, never for neither.)
export function firstOutput(stdout: Readable): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const answer = (has: boolean) => {
      stdout.off('readable', onReadable);
      stdout.off('close', onClose);
      if (!has) stdout.resume(); // let an empty stream reach 'end'
      resolve(has);
    };
    const onReadable = () => answer(stdout.readableLength > 0);
    const onClose = () => answer(false);
    stdout.on('readable', onReadable);
    stdout.on('close', onClose);
  });
}
