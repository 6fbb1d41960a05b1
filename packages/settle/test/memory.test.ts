import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import { settleBin, sh } from './support.js';

const MiB = 1024 * 1024;
const library = new URL('../src/index.js', import.meta.url).href;

// Runs a settle call in a fresh node process and reports its peak RSS growth over the call.
const probe = `
import { stream } from ${JSON.stringify(library)};
const { KIND, FILE, FIXTURE, SIZE } = process.env;
const input = KIND === 'file' ? { file: FILE } : KIND === 'buffer' ? Buffer.alloc(Number(SIZE), 'p') : undefined;
const before = process.memoryUsage().rss;
let peak = before;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
const { execution } = await stream(
  { argv: [FIXTURE], input, deadlineMs: 1500, graceMs: 300, stderr: 'ignore' },
  null,
  async (stdout) => {
    // Reads (or, for 'unread', holds on without reading) until settle ends the stream. A
    // consumer that returned at once would stop the reading, and the fixture's first echo
    // could then die of SIGPIPE before the deadline.
    if (KIND !== 'unread') stdout.resume();
    await new Promise((resolve) => stdout.once('close', resolve));
  },
);
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
console.log(JSON.stringify({ reason: execution.reason, bytesIn: execution.bytesIn, bytesOut: execution.bytesOut, growth: peak - before }));
`;

async function probeRun(env: Record<string, string>): Promise<{ reason: string; bytesIn: number; bytesOut: number; growth: number }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', probe], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const [code] = await once(child, 'close');
  assert.is(code, 0, `probe failed: ${out}`);
  return JSON.parse(out);
}

test(
  'memory stays bounded while a child refuses to read a 1 GiB prompt file (streamed, not read whole)',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'prompt.bin');
      writeFileSync(file, '');
      truncateSync(file, 1024 * MiB); // sparse: costs no disk
      const r = await probeRun({ KIND: 'file', FILE: file, FIXTURE: sh('never-read-stdin.sh') });
      assert.is(r.reason, 'timed_out');
      assert.ok(r.bytesIn < 64 * MiB, `bytesIn ${r.bytesIn}`);
      assert.ok(r.growth < 96 * MiB, `RSS grew ${Math.round(r.growth / MiB)} MiB`);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'a child that never reads a 256 MiB Buffer prompt: the deadline fires, the prompt is never copied',
  withTimeout(60_000, async () => {
    const r = await probeRun({ KIND: 'buffer', SIZE: String(256 * MiB), FIXTURE: sh('never-read-stdin.sh') });
    assert.is(r.reason, 'timed_out');
    assert.ok(r.growth < 96 * MiB, `RSS grew ${Math.round(r.growth / MiB)} MiB`);
  }),
);

test(
  'a flooding child whose consumer does not read is held back by backpressure',
  withTimeout(60_000, async () => {
    const r = await probeRun({ KIND: 'unread', FIXTURE: sh('flood.sh') });
    assert.is(r.reason, 'timed_out');
    assert.ok(r.bytesOut < 16 * MiB, `read ${r.bytesOut} bytes nobody consumed`);
    assert.ok(r.growth < 96 * MiB, `RSS grew ${Math.round(r.growth / MiB)} MiB`);
  }),
);

test(
  'the settle bin stays bounded while its child refuses a 1 GiB --input',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'prompt.bin');
      writeFileSync(file, '');
      truncateSync(file, 1024 * MiB);
      const child = spawn(
        process.execPath,
        [settleBin, '--input', file, '--deadline', '1500ms', '--grace', '300ms', '--', sh('never-read-stdin.sh')],
        {
          stdio: ['ignore', 'ignore', 'ignore'],
        },
      );
      let peakKiB = 0;
      const timer = setInterval(() => {
        try {
          const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          if (hwm) peakKiB = Math.max(peakKiB, Number(hwm[1]));
        } catch {
          // exited
        }
      }, 20);
      const [code] = await once(child, 'exit');
      clearInterval(timer);
      assert.is(code, 124);
      assert.ok(peakKiB > 0, 'sampled the bin');
      assert.ok(peakKiB * 1024 < 256 * MiB, `settle peaked at ${Math.round(peakKiB / 1024)} MiB`);
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
