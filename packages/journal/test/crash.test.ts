// A crash loop: kill -9 a writer at random points, many times. Validation may find a torn
// tail, never corruption, and never calls a half-written record clean; every record the
// writer acknowledged (printed its seq) survives.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, runBin, tempDir, withTimeout } from '@runplan/test-fixtures';
import { validateJournal } from '../src/index.js';

const bin = binPath('journal');
const dir = tempDir('journal-crash-');
test.after(() => dir.cleanup());

// Small deterministic PRNG so a failure can be replayed from its seed.
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Checks whole lines without the journal's own reader: each ends in a newline and
// carries a checksum that matches its JSON.
function assertWholeLines(bytes: Buffer, what: string): number {
  if (bytes.length === 0) return 0;
  assert.is(bytes[bytes.length - 1], 0x0a, `${what}: ends with a newline`);
  const lines = bytes
    .subarray(0, bytes.length - 1)
    .toString('utf8')
    .split('\n');
  lines.forEach((line, i) => {
    const json = Buffer.from(line.slice(9), 'utf8');
    assert.is(crc32(json).toString(16).padStart(8, '0'), line.slice(0, 8), `${what}: line ${i} checksum`);
    assert.is((JSON.parse(line.slice(9)) as { seq: number }).seq, i, `${what}: line ${i} seq`);
  });
  return lines.length;
}

test(
  'kill -9 at random points, many times: never corrupt, never a half record called clean, nothing acknowledged lost',
  withTimeout(300_000, async () => {
    const seed = Number(process.env['RUNPLAN_JOURNAL_CRASH_SEED'] ?? 20261129);
    const random = mulberry32(seed);
    const file = join(dir.path, 'crash.jsonl');
    let maxAcked = 0;
    let torn = 0;
    const iterations = 14;
    for (let round = 0; round < iterations; round++) {
      const child = spawn(process.execPath, [bin, 'append', file, '--type', `round-${round}`, '--wait', '60s'], {
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      const exited = once(child, 'exit');
      child.stdin.on('error', () => {});
      const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ round, i, pad: 'p'.repeat(Math.floor(random() * 300)) }));
      child.stdin.write(`${lines.join('\n')}\n`);
      let out = '';
      const ackTarget = round % 2 === 0 ? 1 + Math.floor(random() * 60) : 0;
      const delay = Math.floor(random() * (round % 2 === 0 ? 20 : 800));
      await new Promise<void>((resolve) => {
        const kill = () => {
          child.kill('SIGKILL');
          resolve();
        };
        if (ackTarget === 0) setTimeout(kill, delay); // anywhere: startup, lock, scan, repair, append
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (ackTarget > 0 && out.split('\n').length - 1 >= ackTarget) setTimeout(kill, delay);
        });
        child.once('exit', () => resolve());
      });
      await exited;
      const acked = out
        .split('\n')
        .filter((l) => l !== '')
        .map(Number);
      if (acked.length > 0) maxAcked = Math.max(maxAcked, acked.at(-1)!);
      const verdict = await validateJournal(file).catch(() => undefined);
      if (verdict === undefined) {
        assert.is(maxAcked, 0, `round ${round}: the journal is missing only if nothing was ever acknowledged`);
        continue;
      }
      const where = `seed ${seed} round ${round}`;
      assert.ok(verdict.status.kind !== 'corrupt', `${where}: ${JSON.stringify(verdict.status)}`);
      assert.ok(verdict.lastSeq >= maxAcked, `${where}: acknowledged seq ${maxAcked} survives (last ${verdict.lastSeq})`);
      const bytes = readFileSync(file);
      if (verdict.status.kind === 'clean') assert.is(assertWholeLines(bytes, where), verdict.count);
      else {
        torn += 1;
        assert.is(assertWholeLines(bytes.subarray(0, verdict.status.offset), where), verdict.count);
      }
    }
    // Whatever the last kill left, the next writer repairs it and the journal is clean.
    const last = await runBin(bin, ['append', file, '--type', 'after-crashes', '--data', JSON.stringify({ torn })]);
    assert.is(last.exitCode, 0, last.stderr);
    const final = await runBin(bin, ['validate', file]);
    assert.is(final.exitCode, 0, final.stderr);
    assert.ok(maxAcked > 0, 'some rounds got records acknowledged');
  }),
);

test.run();
