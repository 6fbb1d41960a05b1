// stream() of 1 GiB from `head -c` against a raw child_process stdout read loop. Each
// round runs in a fresh node process (so its peak RSS is its own) that reads everything
// and counts the bytes; both sides do the same per-chunk work. Byte-exactness is checked
// separately on a patterned stream (64 MiB, 16 with --quick, of "0123456789abcdef\n", whose 17-byte period
// shows any lost, repeated or reordered chunk) by hashing what each side received.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { built, context, interleave, pairedRatio, ratio, row, skipped, worker } from './lib.js';

export const name = 'stream-throughput';
export const title = '`stream()` of 1 GiB from `head -c` vs a raw stdout read loop';

const self = fileURLToPath(import.meta.url);
const GiB = 1 << 30;
const PATTERN = '0123456789abcdef\n';

// The source command: zeros for throughput, the pattern (via `yes | head`) for exactness.
function source(kind, bytes) {
  return kind === 'zeros' ? ['head', '-c', String(bytes), '/dev/zero'] : ['sh', '-c', `yes ${PATTERN.trim()} | head -c ${bytes}`];
}

// What each side does with a chunk: count it, and hash it when checking exactness.
function sink(kind) {
  const hash = kind === 'pattern' ? createHash('sha256') : undefined;
  return {
    bytes: 0,
    take(chunk) {
      this.bytes += chunk.length;
      hash?.update(chunk);
    },
    digest: () => hash?.digest('hex'),
  };
}

async function runRaw(argv, s, detached = false) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'], detached });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  for await (const chunk of child.stdout) s.take(chunk);
  const code = await exited;
  if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}`);
}

async function runSettle(argv, s, stream) {
  const { execution } = await stream({ argv, stderr: 'inherit' }, s, async (stdout, state) => {
    for await (const chunk of stdout) state.take(chunk);
  });
  if (execution.reason !== 'exited' || execution.exitCode !== 0 || execution.error)
    throw new Error(`stream settled ${execution.reason} ${execution.exitCode} ${execution.error?.message ?? ''}`);
}

// Worker: `node stream-throughput.js --worker raw|raw-detached|settle zeros|pattern BYTES`
// prints one JSON line. raw-detached is the raw loop with the child in a new session, as
// settle starts every child (Node's `detached: true` is setsid()); with the kernel's
// sched_autogroup a new session is a scheduling group of its own, which costs throughput
// whenever the CPUs are contended.
async function workerMain([side, kind, bytesText]) {
  const bytes = Number(bytesText);
  const s = sink(kind);
  // settle is loaded before the clock starts: this measures streaming, not module loading.
  const { stream } = side === 'settle' ? await import('@runplan/settle') : {};
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const argv = source(kind, bytes);
  await (side === 'settle' ? runSettle(argv, s, stream) : runRaw(argv, s, side === 'raw-detached'));
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(JSON.stringify({ ms, cpuMs, bytes: s.bytes, digest: s.digest(), maxRssMB: process.resourceUsage().maxRSS / 1024 }));
}

function autogroup() {
  try {
    return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

// The sha256 of `bytes` bytes of the pattern, computed here.
function expectedDigest(bytes) {
  const hash = createHash('sha256');
  const block = Buffer.from(PATTERN.repeat(Math.ceil((1 << 20) / PATTERN.length)));
  const period = block.length; // a multiple of the pattern: blocks join seamlessly
  let left = bytes;
  while (left > 0) {
    const n = Math.min(left, period);
    hash.update(block.subarray(0, n));
    left -= n;
  }
  return hash.digest('hex');
}

export async function measure({ quick }) {
  if (!built('settle')) return skipped(name, title, 'not available yet: packages/settle is not built (npm run build)');
  const bytes = quick ? GiB / 8 : GiB;
  const rss = { raw: [], settle: [], 'raw-detached': [] };
  const cpu = { raw: [], settle: [], 'raw-detached': [] };
  const run = (side) => () => {
    const r = worker(self, ['--worker', side, 'zeros', String(bytes)]);
    if (r.bytes !== bytes) throw new Error(`${side} received ${r.bytes} of ${bytes} bytes`);
    rss[side].push(r.maxRssMB);
    cpu[side].push(r.cpuMs / (bytes / GiB));
    return bytes / 2 ** 20 / (r.ms / 1000);
  };
  const v = await interleave(
    [
      { key: 'raw', run: run('raw') },
      { key: 'settle', run: run('settle') },
      { key: 'raw-detached', run: run('raw-detached') },
    ],
    { rounds: quick ? 2 : 4, warmup: 1 },
  );

  // Exactness: both sides hash a patterned stream; both must match the expected digest.
  const checkBytes = (quick ? 16 : 64) << 20;
  const expected = expectedDigest(checkBytes);
  const exact = {};
  for (const side of ['raw', 'settle']) {
    const r = worker(self, ['--worker', side, 'pattern', String(checkBytes)]);
    exact[side] = r.bytes === checkBytes && r.digest === expected;
  }
  const rows = [
    row('raw child_process read loop', 'MiB/s', v.raw),
    row('settle stream()', 'MiB/s', v.settle),
    row('raw loop, child in a new session (detached)', 'MiB/s', v['raw-detached']),
    row('reader CPU per GiB: raw', 'ms', cpu.raw.slice(-v.raw.length)),
    row('reader CPU per GiB: settle stream()', 'ms', cpu.settle.slice(-v.settle.length)),
    row('reader CPU per GiB: raw detached', 'ms', cpu['raw-detached'].slice(-v['raw-detached'].length)),
    row('peak RSS: raw worker', 'MB', rss.raw.slice(-v.raw.length)),
    row('peak RSS: settle worker', 'MB', rss.settle.slice(-v.settle.length)),
  ];
  const peak = Math.max(...rows.at(-1).values);
  return {
    name,
    title,
    rows,
    ratios: [
      ratio('stream / raw throughput', pairedRatio(v.settle, v.raw), {
        limit: 0.85,
        better: 'higher',
        meaning: 'bytes per second through stream() relative to reading the pipe directly',
      }),
      context(
        'stream / raw detached',
        pairedRatio(v.settle, v['raw-detached']),
        'settle against the same raw loop with the child in its own session, as settle runs it',
      ),
      ratio('settle worker peak RSS', peak, {
        limit: 100,
        better: 'lower',
        unit: 'MB',
        meaning: 'largest resident set of a whole node process streaming 1 GiB through stream()',
      }),
      ratio('byte-exact (1 = yes)', exact.settle ? 1 : 0, {
        limit: 1,
        better: 'higher',
        unit: '',
        meaning: 'sha256 of the patterned stream stream() delivered equals the source',
      }),
    ],
    notes: [
      `${bytes / 2 ** 20} MiB per round, each round a fresh node process; RSS is the whole process (node itself is ~40 MB)`,
      `exactness: settle ${exact.settle ? 'byte-exact' : 'NOT byte-exact'}, raw ${exact.raw ? 'byte-exact' : 'NOT byte-exact'}`,
      `kernel.sched_autogroup_enabled = ${autogroup()}; load average at the end ${loadavg()[0].toFixed(2)} on ${cpus().length} CPUs`,
    ],
  };
}

if (process.argv[2] === '--worker') await workerMain(process.argv.slice(3));
