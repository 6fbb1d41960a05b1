import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '@runplan/test-fixtures';
import { longTimeout, maxTimerMs, sleepFor } from '../src/index.js';

const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

// Resolves with the ms from now until `start` fires the timer it makes (via its callback).
function timeToFire(start: (fire: () => void) => void): Promise<number> {
  const t0 = monotonicMs();
  return new Promise((resolve) => start(() => resolve(monotonicMs() - t0)));
}

test(
  'a wait past setTimeout’s limit does not fire at once (Node would fire after 1 ms)',
  withTimeout(10_000, async () => {
    let fired = false;
    const timer = longTimeout(maxTimerMs + 1, () => (fired = true));
    const plain = await timeToFire((fire) => setTimeout(fire, 50));
    timer.cancel();
    assert.ok(plain >= 49);
    assert.not.ok(fired, 'a 2^31 ms timer fired within 50 ms');
  }),
);

test(
  'a wait longer than one link is a chain of links no longer than the chunk, and fires no earlier than asked',
  withTimeout(10_000, async () => {
    const delays: number[] = [];
    const original = globalThis.setTimeout;
    globalThis.setTimeout = ((fn: () => void, ms: number) => {
      delays.push(ms);
      return original(fn, ms);
    }) as typeof setTimeout;
    let took: number;
    try {
      took = await timeToFire((fire) => longTimeout(130, fire, 20));
    } finally {
      globalThis.setTimeout = original;
    }
    assert.equal(delays, [20, 20, 20, 20, 20, 20, 10]);
    assert.ok(took >= 129, `fired after ${took} ms, before 130`);
  }),
);

test(
  'refresh restarts the whole chained wait; cancel stops it for good',
  withTimeout(10_000, async () => {
    const t0 = monotonicMs();
    let firedAt = 0;
    const fired = new Promise<void>((resolve) => {
      const timer = longTimeout(
        100,
        () => {
          firedAt = monotonicMs() - t0;
          resolve();
        },
        60,
      );
      // Links of 60 and 40 ms: a refresh 80 ms in, during the shorter last link, re-arms the whole chain.
      setTimeout(() => timer.refresh(), 80);
    });
    await fired;
    assert.ok(firedAt >= 179, `fired after ${firedAt} ms; a refresh at 80 ms should push it to 180`);

    let cancelledFired = false;
    const cancelled = longTimeout(20, () => (cancelledFired = true), 5);
    cancelled.cancel();
    cancelled.refresh(); // no effect once cancelled
    await timeToFire((fire) => setTimeout(fire, 60));
    assert.not.ok(cancelledFired);
  }),
);

test(
  'refresh during a full-length link re-arms it in place and keeps the full length',
  withTimeout(10_000, async () => {
    const t0 = monotonicMs();
    const at = await new Promise<number>((resolve) => {
      // Links of 30, 30 and 20 ms: a refresh 40 ms in, during the second (full-length) link.
      const timer = longTimeout(80, () => resolve(monotonicMs() - t0), 30);
      setTimeout(() => timer.refresh(), 40);
    });
    assert.ok(at >= 119, `fired after ${at} ms; a refresh at 40 ms should push it to 120`);
  }),
);

test(
  'sleepFor resolves true after the time, chained; false at once on abort, never rejecting',
  withTimeout(10_000, async () => {
    const t0 = monotonicMs();
    assert.is(await sleepFor(70, undefined, 20), true);
    assert.ok(monotonicMs() - t0 >= 69);

    const controller = new AbortController();
    const long = sleepFor(maxTimerMs * 3, controller.signal);
    setTimeout(() => controller.abort(), 30);
    assert.is(await long, false);
    assert.is(await sleepFor(10_000, controller.signal), false, 'already aborted');

    const cleanup = new AbortController();
    const first = await Promise.race([
      sleepFor(maxTimerMs + 1, cleanup.signal).then((done) => (done ? 'fired' : 'aborted')),
      sleepFor(50).then(() => 'waited'),
    ]);
    cleanup.abort();
    assert.is(first, 'waited');
  }),
);

test.run();
