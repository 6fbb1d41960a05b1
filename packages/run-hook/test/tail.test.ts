import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough } from 'node:stream';
import { TailBuffer, TailSink } from '../src/tail.js';

test('a tail keeps only the last bytes, across chunk boundaries', () => {
  const tail = new TailBuffer(10);
  for (let i = 0; i < 100; i++) tail.push(Buffer.from(`${i % 10}`));
  assert.is(tail.text(), '0123456789');
  assert.is(tail.total, 100);
  tail.push(Buffer.from('abcdefghijklmnop'));
  assert.is(tail.text(), 'ghijklmnop');
});

test('a tail holds bounded memory whatever is written', () => {
  const tail = new TailBuffer(8);
  for (let i = 0; i < 10_000; i++) tail.push(Buffer.from('xyz'));
  assert.ok(tail.bytes().length === 8);
  assert.ok((tail as unknown as { held: number }).held < 16);
});

test('a multi-byte character cut by the window is dropped, not garbled', () => {
  const tail = new TailBuffer(5);
  tail.push(Buffer.from('aé€€')); // 1 + 2 + 3 + 3 bytes; the window starts inside the first €
  assert.is(tail.text(), '€');
});

test('a sink passes bytes on and keeps going when its destination fails', async () => {
  const destination = new PassThrough();
  const seen: Buffer[] = [];
  destination.on('data', (c: Buffer) => seen.push(c));
  const sink = new TailSink(destination, 4);
  await new Promise<void>((resolve) => sink.write(Buffer.from('hello'), () => resolve()));
  assert.is(Buffer.concat(seen).toString(), 'hello');
  destination.destroy(new Error('EPIPE'));
  await new Promise<void>((resolve, reject) => sink.write(Buffer.from(' world'), (e) => (e ? reject(e) : resolve())));
  assert.is(sink.tail.text(), 'orld');
});

test.run();
