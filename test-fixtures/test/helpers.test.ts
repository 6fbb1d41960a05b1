import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { parseJsonLines, runBin, tempDir, withTimeout } from '../src/index.js';

test('parseJsonLines names the line that is not JSON', () => {
  assert.equal(parseJsonLines('{"a":1}\n\n[2]\n'), [{ a: 1 }, [2]]);
  assert.throws(() => parseJsonLines('{"a":1}\nnope\n'), /line 2 is not JSON/);
});

test('tempDir cleans up', () => {
  const dir = tempDir();
  assert.ok(existsSync(dir.path));
  dir.cleanup();
  assert.not.ok(existsSync(dir.path));
});

test('withTimeout rejects a body that never settles', async () => {
  let message = '';
  await withTimeout(50, () => new Promise(() => {}))().catch((e: Error) => (message = e.message));
  assert.match(message, /timed out after 50ms/);
});

test(
  'runBin reports the exit code and output of a real child',
  withTimeout(10_000, async () => {
    const r = await runBin('/bin/sh', ['-c', 'printf out; printf err >&2; exit 3']);
    assert.equal(r.exitCode, 3);
    assert.equal(r.stdout, 'out');
    assert.equal(r.stderr, 'err');
  }),
);

test.run();
