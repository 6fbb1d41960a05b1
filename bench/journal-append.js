// Durable journal appends against a raw write + fdatasync loop on the same disk. Both sides
// encode the same line (`<crc32> <json>\n`, seq/prev/ts/type/data) and wait for fdatasync
// before the next append. Then 32 appends are queued at once (Promise.all), which the
// writer's group commit turns into one write and one fdatasync; the raw side does the same
// by hand for context.
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { built, interleave, now, pairedRatio, ratio, row, scratch, skipped } from './lib.js';

export const name = 'journal-append';
export const title = 'durable `append()` vs a raw write + fdatasync loop';

const write = promisify(fs.write);
const fdatasync = promisify(fs.fdatasync);

// A checkpoint-sized record (about 400 bytes of JSON), like the coordinator writes per task.
const data = (i) => ({
  id: `${i}`.padStart(64, 'c'),
  logicalRunId: '20261129T075500Z-4f2a',
  planDigest: 'a'.repeat(64),
  taskId: `t${i}`,
  taskContractDigest: 'b'.repeat(64),
  dependencyCheckpointIds: [],
  baseCommit: 'd'.repeat(40),
  resultCommit: 'e'.repeat(40),
  attempt: 1,
});

// The raw side: same line format, chained like the journal, O_APPEND fd, fdatasync per batch.
function rawJournal(path) {
  const fd = fs.openSync(path, 'a', 0o600);
  let seq = 0;
  let prev = '00000000';
  const line = (type, d) => {
    const json = Buffer.from(JSON.stringify({ seq: seq++, prev, ts: new Date().toISOString(), type, data: d }));
    prev = crc32(json).toString(16).padStart(8, '0');
    return Buffer.concat([Buffer.from(`${prev} `), json, Buffer.from('\n')]);
  };
  return {
    async append(type, d) {
      const b = line(type, d);
      await write(fd, b, 0, b.length, null);
      await fdatasync(fd);
    },
    async appendMany(type, ds) {
      const b = Buffer.concat(ds.map((d) => line(type, d)));
      await write(fd, b, 0, b.length, null);
      await fdatasync(fd);
    },
    close: () => fs.closeSync(fd),
  };
}

export async function measure({ quick }) {
  if (!built('journal')) return skipped(name, title, 'not available yet: packages/journal is not built (npm run build)');
  const { openWriter } = await import('@runplan/journal');
  const dir = scratch('append');
  try {
    const opened = await openWriter(join(dir.path, 'journal.jsonl'), { create: true });
    if (!opened.ok) throw new Error(`openWriter: ${opened.error.message}`);
    const writer = opened.value;
    const raw = rawJournal(join(dir.path, 'raw.jsonl'));
    const single = quick ? 100 : 150;
    const batches = quick ? 10 : 15;
    let i = 0;
    // appends per second over `count` sequential awaited appends
    const sequential = (append) => async () => {
      const start = now();
      for (let k = 0; k < single; k++) await append('checkpoint', data(i++));
      return single / ((now() - start) / 1000);
    };
    // appends per second with 32 appends in flight at once, `batches` times
    const queued = (appendAll) => async () => {
      const start = now();
      for (let b = 0; b < batches; b++) await appendAll(Array.from({ length: 32 }, () => data(i++)));
      return (batches * 32) / ((now() - start) / 1000);
    };
    const v = await interleave(
      [
        { key: 'raw', run: sequential((t, d) => raw.append(t, d)) },
        { key: 'journal', run: sequential((t, d) => writer.append(t, d)) },
        { key: 'journal32', run: queued((ds) => Promise.all(ds.map((d) => writer.append('checkpoint', d)))) },
        { key: 'raw32', run: queued((ds) => raw.appendMany('checkpoint', ds)) },
      ],
      { rounds: quick ? 5 : 15, warmup: 1 },
    );
    await writer.close();
    raw.close();
    const rows = [
      row('raw write + fdatasync, one at a time', '/s', v.raw),
      row('journal append(), one at a time', '/s', v.journal),
      row('journal append(), 32 queued at once', '/s', v.journal32),
      row('raw: 32 lines, one write + one fdatasync', '/s', v.raw32),
    ];
    return {
      name,
      title,
      rows,
      ratios: [
        ratio('append / raw (one at a time)', pairedRatio(v.journal, v.raw), {
          limit: 0.9,
          better: 'higher',
          meaning: 'durable appends per second relative to a bare write + fdatasync loop',
        }),
        ratio('32 queued / one at a time', pairedRatio(v.journal32, v.journal), {
          limit: 10,
          better: 'higher',
          meaning: 'how much group commit multiplies the append rate when appends queue up',
        }),
        ratio('32 queued / raw batched', pairedRatio(v.journal32, v.raw32), {
          limit: 0.95,
          better: 'higher',
          meaning: 'group commit against batching by hand: the same 32 lines in one write and one fdatasync (issue 22)',
        }),
      ],
      notes: [`${single} sequential appends or ${batches}×32 queued appends per round, records ~400 bytes, files in ${dir.path}`],
    };
  } finally {
    dir.cleanup();
  }
}
