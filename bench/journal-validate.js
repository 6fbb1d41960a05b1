// validateJournal() on 1e5 and 1e6 records against the naive way: readFile the whole
// journal, split it into lines, and for each line check the CRC, JSON.parse it, and check
// seq and the prev chain. Each round is a fresh node process, so its peak RSS shows
// whether memory stays bounded as the journal grows. The journals are written once with
// the journal's own encoder (same bytes a writer produces) and cached in the temp dir.
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { built, interleave, pairedRatio, ratio, row, skipped, worker } from './lib.js';

export const name = 'journal-validate';
export const title = '`validateJournal()` of 1e5 / 1e6 records vs readFile + split + CRC + JSON.parse';

const self = fileURLToPath(import.meta.url);

// A journal of `count` records (header + attempt/command/checkpoint-like events, ~330 bytes
// each), deterministic so a cached copy is the same file. Returns its path.
async function journalOf(count) {
  const dir = join(tmpdir(), 'runplan-bench');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `journal-${count}.jsonl`);
  if (existsSync(path) && existsSync(`${path}.done`)) return path;
  const { encodeRecord } = await import('@runplan/journal');
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp);
  let prev = '00000000';
  const types = ['attempt-started', 'command-settled', 'checkpoint', 'attempt-closed'];
  let pending = [];
  for (let seq = 0; seq < count; seq++) {
    const ts = new Date(Date.UTC(2026, 10, 29, 7, 55) + seq * 10).toISOString();
    const record =
      seq === 0
        ? { seq, prev, ts, type: 'journal-header', data: { format: 1, runId: '20261129T075500Z-4f2a', salt: '0f'.repeat(16) } }
        : {
            seq,
            prev,
            ts,
            type: types[seq % 4],
            data: {
              taskId: `t${Math.floor(seq / 4)}`,
              attempt: 1,
              baseCommit: 'd'.repeat(40),
              resultCommit: 'e'.repeat(40),
              contractDigest: 'b'.repeat(64),
              note: 'ok',
            },
          };
    const line = encodeRecord(record);
    prev = line.crc;
    pending.push(line.bytes);
    if (pending.length === 4096 || seq === count - 1) {
      if (!out.write(Buffer.concat(pending))) await new Promise((r) => out.once('drain', r));
      pending = [];
    }
  }
  await new Promise((resolve, reject) => out.end((e) => (e ? reject(e) : resolve())));
  renameSync(tmp, path);
  writeFileSync(`${path}.done`, `${count}\n`);
  return path;
}

// The naive validator: everything in memory at once.
function naiveValidate(path) {
  const lines = readFileSync(path, 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let expected = 0;
  let prev = '00000000';
  for (const line of lines) {
    const crc = line.slice(0, 8);
    const json = line.slice(9);
    if (crc32(json).toString(16).padStart(8, '0') !== crc) throw new Error(`crc mismatch at seq ${expected}`);
    const record = JSON.parse(json);
    if (record.seq !== expected) throw new Error(`seq ${record.seq}, expected ${expected}`);
    if (record.prev !== prev) throw new Error(`chain broken at seq ${expected}`);
    prev = crc;
    expected++;
  }
  return expected;
}

// Worker: `node journal-validate.js --worker tool|naive PATH` prints one JSON line.
async function workerMain([side, path]) {
  const start = performance.now();
  let count;
  if (side === 'tool') {
    const { validateJournal } = await import('@runplan/journal');
    const v = await validateJournal(path);
    if (v.status.kind !== 'clean') throw new Error(`validateJournal: ${JSON.stringify(v.status)}`);
    count = v.count;
  } else {
    count = naiveValidate(path);
  }
  console.log(JSON.stringify({ ms: performance.now() - start, count, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
}

export async function measure({ quick, log }) {
  if (!built('journal')) return skipped(name, title, 'not available yet: packages/journal is not built (npm run build)');
  const sizes = quick ? [1e5] : [1e5, 1e6];
  const rows = [];
  const ratios = [];
  const notes = [];
  for (const count of sizes) {
    log?.(`journal-validate: preparing ${count} records`);
    const path = await journalOf(count);
    const rss = { tool: [], naive: [] };
    const run = (side) => () => {
      const r = worker(self, ['--worker', side, path]);
      if (r.count !== count) throw new Error(`${side} counted ${r.count} of ${count}`);
      rss[side].push(r.maxRssMB);
      return r.ms;
    };
    const v = await interleave(
      [
        { key: 'naive', run: run('naive') },
        { key: 'tool', run: run('tool') },
      ],
      { rounds: count >= 1e6 ? 2 : quick ? 2 : 5, warmup: 1 },
    );
    const label = count >= 1e6 ? '1e6' : '1e5';
    const mb = (statSync(path).size / 2 ** 20).toFixed(0);
    rows.push(
      row(`${label}: naive readFile+split+CRC+parse`, 'ms', v.naive),
      row(`${label}: validateJournal()`, 'ms', v.tool),
      row(`${label}: peak RSS naive`, 'MB', rss.naive.slice(-v.naive.length)),
      row(`${label}: peak RSS validateJournal()`, 'MB', rss.tool.slice(-v.tool.length)),
    );
    ratios.push(
      ratio(`${label}: naive / validateJournal()`, pairedRatio(v.naive, v.tool), {
        // The target is for 1e6 records; at 1e5 loading the package (timed on the
        // tool's side) is a larger share, so it keeps the first round's ≥ 2×.
        limit: count >= 1e6 ? 3 : 2,
        better: 'higher',
        meaning: 'how many times faster validateJournal() is than the naive check',
      }),
    );
    ratios.push(
      ratio(`${label}: validateJournal() peak RSS`, Math.max(...rows.at(-1).values), {
        limit: 100,
        better: 'lower',
        unit: 'MB',
        meaning: 'whole-process peak RSS while validating (bounded: does not grow with the journal)',
      }),
    );
    notes.push(`${label}: ${count} records, ${mb} MiB (${path})`);
  }
  if (quick) notes.push('1e6 records: not run with --quick');
  return { name, title, rows, ratios, notes };
}

if (process.argv[2] === '--worker') await workerMain(process.argv.slice(3));
