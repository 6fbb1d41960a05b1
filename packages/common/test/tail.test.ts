import { PassThrough, Writable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '@runplan/test-fixtures';
import { BreakableDestination, TailBuffer, textTail, utf8Tail } from '../src/index.js';

test('utf8Tail and textTail keep the last bytes and drop a character the window cuts', () => {
  const text = 'aé€😀z'; // 1 + 2 + 3 + 4 + 1 bytes
  assert.is(utf8Tail(Buffer.from(text), 100), text);
  assert.is(utf8Tail(Buffer.from(text), 5), '😀z');
  assert.is(utf8Tail(Buffer.from(text), 4), 'z', 'a 4-byte character cut by the window is dropped');
  assert.is(textTail(text, 8), '€😀z');
  assert.is(textTail(text, 7), '😀z', 'a 3-byte character cut by the window is dropped');
  assert.is(textTail('short', 4096), 'short');
});

test('TailBuffer holds a bounded tail and never garbles its first character', () => {
  const tail = new TailBuffer(5);
  tail.push(Buffer.from('hello wo'));
  tail.push(Buffer.from('rld€'));
  assert.is(tail.total, 14);
  assert.is(tail.bytes().length, 5);
  assert.is(tail.text(), 'ld€');
});

test(
  'BreakableDestination: an erroring destination is dropped, never thrown, and nothing waits on it',
  withTimeout(5_000, async () => {
    const failing = new Writable({
      highWaterMark: 1,
      write(_chunk, _enc, cb) {
        cb(new Error('EPIPE'));
      },
    });
    const out = new BreakableDestination(failing);
    await out.send('x');
    await out.send('y');
    assert.ok(out.broken);
    assert.is(out.error?.message, 'EPIPE');
    const closed = new PassThrough();
    closed.destroy();
    const gone = new BreakableDestination(closed);
    assert.is(gone.write('z'), false);
    assert.ok(gone.broken, 'a destroyed destination is broken');
  }),
);

test(
  'BreakableDestination honours backpressure: send waits for drain',
  withTimeout(5_000, async () => {
    const slow = new PassThrough({ highWaterMark: 1 });
    const out = new BreakableDestination(slow);
    let sent = false;
    const sending = out.send(Buffer.alloc(64)).then(() => (sent = true));
    await new Promise((r) => setImmediate(r));
    assert.not.ok(sent, 'waiting for the reader');
    slow.resume();
    await sending;
    assert.ok(sent);
    assert.not.ok(out.broken);
  }),
);

test.run();
