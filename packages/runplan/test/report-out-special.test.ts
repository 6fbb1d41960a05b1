// `runplan report --out` naming a FIFO or a device writes into it: it is never replaced by a
// regular file (as root, `--out /dev/null` had made /dev/null a 0600 file holding the report).
import { execFileSync, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from '@runplan/test-fixtures';
import { runplan, withPlan } from './support.js';

test(
  'report --out a FIFO: the reader gets the HTML, the FIFO stays a FIFO',
  withPlan('single', {}, async (f) => {
    assert.is((await runplan(['run', f.plan], f)).exitCode, 0);
    const dir = tempDir('runplan-fifo-');
    try {
      const fifo = join(dir.path, 'report.fifo');
      execFileSync('mkfifo', [fifo]);
      // The reader gives up after 5 s: a FIFO replaced by a file never gets a writer.
      const reader = spawn('timeout', ['5', 'cat', fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
      const chunks: Buffer[] = [];
      reader.stdout.on('data', (c: Buffer) => chunks.push(c));
      const read = new Promise<void>((resolve) => reader.on('close', () => resolve()));
      const r = await runplan(['report', '--out', fifo], f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.ok(statSync(fifo).isFIFO(), 'the FIFO is still a FIFO');
      await read;
      assert.match(Buffer.concat(chunks).toString('utf8'), /^<!doctype html>/i);
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
