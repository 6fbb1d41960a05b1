// What a child costs a node parent that holds memory: `spawn('/bin/true')` round trips (to
// 'close') from a fresh node process holding nothing extra, 64 MB of live JS objects, or
// 64 MB of Buffers. libuv forks the parent and blocks until the child's exec; fork copies the
// page tables of the parent's anonymous memory and the exec tears the copy down — except for
// mappings marked MADV_DONTFORK, which is how the V8 heap is mapped (`VmFlags: dc` in
// /proc/self/smaps). So memory malloc'd outside the JS heap (Buffers, glibc arenas of V8's
// worker threads, compiler zones) makes every spawn dearer; the JS heap itself barely does.
// (One such source found here: TurboFan's compile of settle's runChild when it was one
// 5.3 KiB-bytecode function — its compiler memory stayed in a V8 worker's malloc arena. The
// function is split now, 3.2 KiB; bench/RESULTS.md, "Third round".)
//
// usage as a worker: node bench/spawn-copied.js --worker none|heap|buffer COUNT
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { context, interleave, pairedRatio, row, worker } from './lib.js';

export const name = 'spawn-copied';
export const title = 'a node parent\'s `spawn("/bin/true")` holding 64 MB of Buffers or of JS objects vs holding nothing';

const MB = 64;

// The parent's anonymous memory (kB) that fork copies and that it does not (MADV_DONTFORK).
function anonByFork() {
  let copied = 0;
  let dontfork = 0;
  let anon = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (line.startsWith('Anonymous:')) anon = Number(line.split(/\s+/)[1]);
    else if (line.startsWith('VmFlags:')) {
      if (/\bdc\b/.test(line)) dontfork += anon;
      else copied += anon;
      anon = 0;
    }
  }
  return { copiedMb: copied / 1024, dontforkMb: dontfork / 1024 };
}

// One worker: hold the ballast, warm up, then time `count` sequential round trips.
async function runWorker(kind, count) {
  const keep = [];
  if (kind === 'heap') for (let i = 0; i < MB * 16_384; i++) keep.push({ i, s: `x${i}` });
  if (kind === 'buffer') for (let i = 0; i < MB; i++) keep.push(Buffer.alloc(1 << 20, 1));
  const once = () =>
    new Promise((resolve, reject) => {
      const child = spawn('/bin/true', [], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.on('error', reject);
      child.on('close', resolve);
    });
  for (let i = 0; i < 20; i++) await once();
  const start = performance.now();
  for (let i = 0; i < count; i++) await once();
  const ms = (performance.now() - start) / count;
  process.stdout.write(`${JSON.stringify({ ms, ...anonByFork(), held: keep.length })}\n`);
}

export async function measure({ quick }) {
  const count = quick ? 100 : 300;
  const script = fileURLToPath(import.meta.url);
  const memory = {};
  const sample = (kind) => () => {
    const r = worker(script, ['--worker', kind, String(count)]);
    memory[kind] = r;
    return r.ms;
  };
  const v = await interleave(
    [
      { key: 'none', run: sample('none') },
      { key: 'heap', run: sample('heap') },
      { key: 'buffer', run: sample('buffer') },
    ],
    { rounds: quick ? 1 : 3, warmup: 0 },
  );
  const mem = (kind) => `${memory[kind].copiedMb.toFixed(0)} MB copied by fork, ${memory[kind].dontforkMb.toFixed(0)} MB not`;
  const perMb = (pairedRatio(v.buffer, v.none) - 1) * (v.none.reduce((a, b) => a + b, 0) / v.none.length) * 1000;
  return {
    name,
    title,
    rows: [
      row(`holding nothing (${mem('none')})`, 'ms', v.none),
      row(`holding ${MB} MB of JS objects (${mem('heap')})`, 'ms', v.heap),
      row(`holding ${MB} MB of Buffers (${mem('buffer')})`, 'ms', v.buffer),
    ],
    ratios: [
      context(
        'buffers / nothing',
        pairedRatio(v.buffer, v.none),
        `round trip of a spawn from a parent with ${MB} MB more memory that fork copies`,
      ),
      context('JS heap / nothing', pairedRatio(v.heap, v.none), `the same with ${MB} MB of live JS objects: the V8 heap is MADV_DONTFORK`),
      context(
        'per copied MB',
        perMb / (memory.buffer.copiedMb - memory.none.copiedMb),
        'µs a spawn costs per MB of memory fork copies',
        'µs',
      ),
    ],
    notes: [`${count} sequential round trips per worker after 20 warm-up ones, each variant a fresh node process`],
  };
}

if (process.argv[2] === '--worker') await runWorker(process.argv[3], Number(process.argv[4]));
