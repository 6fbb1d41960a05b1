import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '@runplan/test-fixtures';
import { exitCodeFor, stream, type SettleEvent } from '../src/index.js';
import { killQuietly, pidsIn, reaped, sh, taggedAlive } from './support.js';

const MiB = 1024 * 1024;

test(
  'the prompt is written while stdout is consumed; state comes back',
  withTimeout(20_000, async () => {
    const { execution, state } = await stream(
      { argv: ['tr', 'a-z', 'A-Z'], input: 'hello\nworld\n' },
      { lines: [] as string[] },
      async (stdout, s) => {
        for await (const chunk of stdout) s.lines.push(...String(chunk).split('\n').filter(Boolean));
      },
    );
    assert.is(execution.reason, 'exited');
    assert.is(execution.exitCode, 0);
    assert.equal(state?.lines, ['HELLO', 'WORLD']);
    assert.is(execution.bytesIn, 12);
  }),
);

test(
  'a child that closes stdin at once while 1 MiB is written: EPIPE recorded, state returned, first error kept',
  withTimeout(20_000, async () => {
    let epipe: () => void = () => {};
    const epipeSeen = new Promise<void>((resolve) => (epipe = resolve));
    const { execution, state } = await stream(
      {
        argv: [sh('close-stdin.sh'), '0.2'],
        input: Buffer.alloc(MiB, 'x'),
        onEvent: (e: SettleEvent) => {
          if (e.type === 'transport-error') epipe();
        },
      },
      { said: '' },
      async (stdout, s) => {
        for await (const chunk of stdout) s.said += String(chunk);
        await epipeSeen;
        return new Error('the consumer failed after the pipe broke'); // later: must not replace EPIPE
      },
    );
    assert.is(state?.said, 'closed\n', 'consumer state returned');
    assert.is(execution.error?.code, 'EPIPE');
    assert.is(execution.error?.where, 'stdin');
    assert.ok(execution.error?.cause instanceof Error, 'cause chain kept');
    assert.ok(execution.bytesIn < MiB);
    assert.is(execution.reason, 'exited');
    assert.is(execution.exitCode, 0);
    assert.is(exitCodeFor(execution), 0);
    assert.ok(reaped(execution.pid));
  }),
);

test(
  'stdout consumed successfully, then a broken pipe: state returned with the EPIPE',
  withTimeout(20_000, async () => {
    const { execution, state } = await stream(
      { argv: [sh('close-stdin.sh')], input: Buffer.alloc(MiB, 'x') },
      { said: '' },
      async (stdout, s) => {
        for await (const chunk of stdout) s.said += String(chunk);
      },
    );
    assert.is(state?.said, 'closed\n');
    assert.is(execution.error?.code, 'EPIPE');
    assert.is(execution.exitCode, 0);
  }),
);

test(
  'partial consumption, then a consumer error while the prompt writer is blocked: that error stays first',
  withTimeout(30_000, async () => {
    const { execution, state } = await stream(
      { argv: [sh('never-read-stdin.sh')], input: Buffer.alloc(8 * MiB, 'p'), deadlineMs: 1000, graceMs: 300 },
      { lines: 0 },
      async (stdout, s) => {
        for await (const _ of stdout) {
          s.lines++;
          return new Error('log reader failed');
        }
      },
    );
    assert.equal(state, { lines: 1 });
    assert.is(execution.error?.code, 'consumer_error');
    assert.is((execution.error?.cause as Error | undefined)?.message, 'log reader failed');
    assert.is(execution.reason, 'timed_out');
    assert.ok(execution.bytesIn < 8 * MiB, 'the writer was blocked');
    assert.ok(reaped(execution.pid));
    assert.equal(taggedAlive(execution.tag), []);
  }),
);

test(
  'a consumer that returns an Error keeps its state and records the error when it is the first',
  withTimeout(20_000, async () => {
    const { execution, state } = await stream({ argv: ['sh', '-c', 'echo one; echo two'] }, { n: 0 }, async (stdout, s) => {
      for await (const _ of stdout) s.n++;
      return new Error('parse failed at line 2');
    });
    assert.ok(state && state.n >= 1);
    assert.is(execution.error?.code, 'consumer_error');
    assert.is((execution.error?.cause as Error | undefined)?.message, 'parse failed at line 2');
    assert.is(execution.exitCode, 0);
  }),
);

test(
  'a consumer that throws mid-stream: no state, the original error, child reaped, nothing left',
  withTimeout(20_000, async () => {
    const boom = new Error('consumer exploded');
    const { execution, state } = await stream(
      { argv: [sh('flood.sh')], graceMs: 500, stderr: 'ignore' },
      { chunks: 0 },
      async (stdout, s) => {
        for await (const _ of stdout) {
          s.chunks++;
          if (s.chunks === 3) throw boom;
        }
      },
    );
    assert.is(state, undefined);
    assert.is(execution.error?.code, 'consumer_threw');
    assert.is(execution.error?.cause, boom);
    assert.ok(['signaled', 'exited'].includes(execution.reason), execution.reason);
    assert.ok(reaped(execution.pid));
    assert.equal(taggedAlive(execution.tag), []);
  }),
);

test(
  'a consumer that throws before reading anything gets no invented state',
  withTimeout(20_000, async () => {
    const { execution, state } = await stream({ argv: ['true'] }, { x: 1 }, async () => {
      throw new Error('no');
    });
    assert.is(state, undefined);
    assert.is(execution.error?.code, 'consumer_threw');
  }),
);

test(
  'a spawn failure returns the original error and no state',
  withTimeout(20_000, async () => {
    let called = false;
    const { execution, state } = await stream({ argv: ['/nonexistent/agent'] }, { x: 1 }, async () => {
      called = true;
    });
    assert.is(execution.reason, 'spawn_failed');
    assert.is(execution.error?.code, 'ENOENT');
    assert.is(state, undefined);
    assert.not.ok(called);
  }),
);

test(
  'a child that never reads stdin and never exits: the deadline still fires',
  withTimeout(30_000, async () => {
    const { execution, state } = await stream(
      { argv: [sh('never-read-stdin.sh')], input: Buffer.alloc(8 * MiB, 'p'), deadlineMs: 500, graceMs: 300 },
      { out: '' },
      async (stdout, s) => {
        for await (const chunk of stdout) s.out += String(chunk);
      },
    );
    assert.is(execution.reason, 'timed_out');
    assert.is(state?.out, 'started\n');
    assert.ok(execution.bytesIn < 8 * MiB);
    assert.is(execution.error, undefined, 'our own teardown of stdin is not a transport error');
    assert.ok(reaped(execution.pid));
    assert.equal(taggedAlive(execution.tag), []);
  }),
);

test(
  '`true` with a large prompt (race): always settles exited 0, an EPIPE at most',
  withTimeout(60_000, async () => {
    const prompt = Buffer.alloc(4 * MiB, 'q');
    for (let i = 0; i < 15; i++) {
      const { execution, state } = await stream({ argv: ['true'], input: prompt }, { bytes: 0 }, async (stdout, s) => {
        for await (const chunk of stdout) s.bytes += (chunk as Buffer).length;
      });
      assert.is(execution.reason, 'exited');
      assert.is(execution.exitCode, 0);
      assert.ok(execution.error === undefined || execution.error.code === 'EPIPE', execution.error?.code);
      assert.equal(state, { bytes: 0 });
      assert.ok(reaped(execution.pid));
    }
  }),
);

test(
  '64 MiB of random binary streamed: sha256 equal',
  withTimeout(60_000, async () => {
    const { execution, state, stderr } = await stream(
      { argv: [sh('random-binary.sh'), String(64 * MiB)], stderr: 'capture' },
      { hash: createHash('sha256'), bytes: 0 },
      async (stdout, s) => {
        for await (const chunk of stdout) {
          s.hash.update(chunk as Buffer);
          s.bytes += (chunk as Buffer).length;
        }
      },
    );
    assert.is(execution.exitCode, 0);
    assert.is(state?.bytes, 64 * MiB);
    assert.is(state?.hash.digest('hex'), stderr?.toString().trim());
  }),
);

test(
  'a split UTF-8 character decodes whole for a consumer that decodes properly',
  withTimeout(20_000, async () => {
    const { state } = await stream({ argv: [sh('split-utf8.sh')] }, { text: '', chunks: 0 }, async (stdout, s) => {
      const decoder = new StringDecoder('utf8');
      for await (const chunk of stdout) {
        s.chunks++;
        s.text += decoder.write(chunk as Buffer);
      }
      s.text += decoder.end();
    });
    assert.is(state?.text, '€\n');
    assert.ok((state?.chunks ?? 0) >= 2, 'it really arrived in pieces');
  }),
);

test(
  'stderr to a caller writable; the writable is not ended',
  withTimeout(20_000, async () => {
    const { PassThrough } = await import('node:stream');
    const sink = new PassThrough();
    let text = '';
    sink.on('data', (c: Buffer) => (text += c.toString()));
    await stream({ argv: ['sh', '-c', 'echo to-err >&2'], stderr: sink }, null, async (stdout) => {
      stdout.resume();
    });
    assert.is(text, 'to-err\n');
    assert.not.ok(sink.writableEnded);
  }),
);

test(
  'a consumer slower than grace still gets every byte after the child exits (not a held pipe)',
  withTimeout(30_000, async () => {
    const { execution, state } = await stream(
      { argv: [sh('write-then-exit.sh'), '200000'], graceMs: 200 }, // fits the socket buffer: the child exits at once
      { bytes: 0 },
      async (stdout, s) => {
        for await (const chunk of stdout) {
          if (s.bytes === 0) await new Promise((resolve) => setTimeout(resolve, 1000));
          s.bytes += (chunk as Buffer).length;
        }
      },
    );
    assert.is(state?.bytes, 200_000);
    assert.is(execution.exitCode, 0);
    assert.not.ok(execution.teardown.heldPipe);
  }),
);

test(
  'an interruption cuts short the wait for a consumer that lingers after a normal exit',
  withTimeout(20_000, async () => {
    const controller = new AbortController();
    const { execution, state } = await stream(
      {
        argv: ['sh', '-c', 'echo once'],
        graceMs: 300,
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'exited') setTimeout(() => controller.abort('SIGINT'), 100);
        },
      },
      { waited: false },
      async (stdout, s) => {
        await new Promise((resolve) => stdout.once('close', resolve)); // never reads
        s.waited = true;
      },
    );
    assert.is(execution.reason, 'interrupted');
    assert.is(exitCodeFor(execution), 130);
    assert.equal(state, { waited: true });
  }),
);

test(
  'a consumer that stops reading early does not hang the call',
  withTimeout(20_000, async () => {
    const { execution, state } = await stream(
      { argv: [sh('flood.sh')], graceMs: 500, stderr: 'ignore' },
      { first: '' },
      async (stdout, s) => {
        for await (const chunk of stdout) {
          s.first = String(chunk).split('\n')[0] ?? '';
          return;
        }
      },
    );
    assert.is(state?.first, 'flood');
    assert.ok(reaped(execution.pid));
    assert.equal(taggedAlive(execution.tag), []);
  }),
);

test(
  'a consumer that destroys its stream while the pipe is paused does not block the child: the rest is read and dropped',
  withTimeout(30_000, async () => {
    let exited: () => void = () => {};
    const childExited = new Promise<void>((resolve) => (exited = resolve));
    const total = 8 * MiB;
    const { execution, state } = await stream(
      { argv: [sh('write-then-exit.sh'), String(total)], onEvent: (e) => e.type === 'exited' && exited() },
      { buffered: 0 },
      async (stdout, s) => {
        await new Promise((resolve) => setTimeout(resolve, 300)); // not reading: the buffer fills, the pipe is paused
        s.buffered = stdout.readableLength;
        stdout.destroy();
        await childExited; // the child can only exit if its 8 MiB are read
      },
    );
    assert.ok((state?.buffered ?? 0) > 0, 'the consumer’s stream held bytes when it was destroyed');
    assert.is(execution.reason, 'exited');
    assert.is(execution.exitCode, 0);
    assert.is(execution.bytesOut, total, 'every byte was read (and dropped)');
  }),
);

test(
  'interrupt while the child already exited but a grandchild holds the pipe',
  withTimeout(30_000, async () => {
    const controller = new AbortController();
    let grandchild: number | undefined;
    const { execution } = await stream(
      { argv: [sh('setsid-holds-stdout.sh'), 'ignore-term'], graceMs: 20_000, signal: controller.signal },
      null,
      async (stdout) => {
        for await (const chunk of stdout) {
          [grandchild] = pidsIn(chunk as Buffer);
          setTimeout(() => controller.abort('SIGINT'), 200);
        }
      },
    );
    killQuietly(grandchild);
    assert.is(execution.reason, 'interrupted');
    assert.is(exitCodeFor(execution), 130);
    assert.ok(execution.durationMs < 15_000, 'did not wait out the 20s grace');
    assert.equal(taggedAlive(execution.tag), []);
  }),
);

test(
  'finish: the consumer ends a child that lingers after its last line; settled as it died, endedBy consumer, tree torn down',
  withTimeout(20_000, async () => {
    const finisher = new AbortController();
    const started = Date.now();
    const { execution, state } = await stream(
      { argv: ['sh', '-c', 'echo done; sleep 300 & sleep 300'], graceMs: 500, deadlineMs: 15_000, finish: finisher.signal },
      { lines: [] as string[] },
      async (stdout, s) => {
        for await (const chunk of stdout) {
          s.lines.push(...String(chunk).split('\n').filter(Boolean));
          if (s.lines.includes('done')) finisher.abort();
        }
      },
    );
    assert.ok(Date.now() - started < 10_000, 'not held to the deadline');
    assert.is(execution.endedBy, 'consumer');
    assert.is(execution.reason, 'signaled');
    assert.is(execution.signal, 'SIGTERM');
    assert.equal(state?.lines, ['done']);
    assert.equal(taggedAlive(execution.tag), [], 'the background sleep is gone too');
  }),
);

test(
  'finish after the child exited on its own changes nothing',
  withTimeout(20_000, async () => {
    const finisher = new AbortController();
    const { execution } = await stream({ argv: ['sh', '-c', 'echo done'], finish: finisher.signal }, {}, async (stdout) => {
      for await (const _ of stdout);
      finisher.abort();
    });
    assert.is(execution.reason, 'exited');
    assert.is(execution.exitCode, 0);
    assert.is(execution.endedBy, undefined);
  }),
);

test.run();
