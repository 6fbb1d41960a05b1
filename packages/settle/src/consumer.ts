import type { Readable } from 'node:stream';
import type { FirstError } from './first-error.js';
import type { ChildOutputs } from './outputs.js';
import { messageOf } from './preflight.js';

/** How the consumer of stdout finished; `undefined` when it never started (spawn failure). */
export type Consumed<R> = { kind: 'returned'; value: R } | { kind: 'threw'; error: unknown };

// Starts the consumer on stdout (it reads concurrently with the prompt writer). Its error is
// recorded the moment it finishes, so an EPIPE that comes later cannot outrank it.
export function startConsumer<R>(
  outputs: ChildOutputs,
  consume: (stdout: Readable) => Promise<R>,
  errors: FirstError,
): { result: Promise<Consumed<R>>; readonly done: boolean } {
  const consumer = {
    done: false,
    result: (async () => consume(outputs.forConsumer))().then(
      (value): Consumed<R> => ({ kind: 'returned', value }),
      (error: unknown): Consumed<R> => ({ kind: 'threw', error }),
    ),
  };
  void consumer.result.then((result) => {
    consumer.done = true;
    outputs.stopReadingStdout();
    if (result.kind === 'threw') {
      errors.record({
        code: 'consumer_threw',
        where: 'consumer',
        message: `stdout consumer threw: ${messageOf(result.error)}`,
        cause: result.error,
      });
    } else if (result.value instanceof Error) {
      errors.record({
        code: 'consumer_error',
        where: 'consumer',
        message: `stdout consumer failed: ${result.value.message}`,
        cause: result.value,
      });
    }
  });
  return consumer;
}
