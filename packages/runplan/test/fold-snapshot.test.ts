// Fold snapshots (events/fold-snapshot.ts): a journal read from a snapshot folds exactly as
// read in full, at every record it could have been taken after; a snapshot is taken only for
// the very bytes it was made from, with its checksum whole and by this fold code; and the
// coordinator writes them as the journal grows, which a resume through the real bin uses.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger } from '@runplan/test-fixtures';
import { snapshotPath, writeSnapshot } from '../src/events/fold-snapshot.js';
import { readRun, type RunRead } from '../src/resume/inspect.js';
import { journalPath, mockPlan, ofType, records, runplan, withPlan, type Fixture } from './support.js';

// A run with a retried failure, a loop crashed after its first round and resumed, and a
// task repair stops: most kinds of record a fold takes.
const PLAN = mockPlan({
  slug: 'fold',
  tasks: `
[[tasks]]
id = "flaky"
prompt = """
mock: fail-first 1
mock: write flaky.txt done
mock: commit flaky
"""

[[tasks]]
id = "improve"
needs = ["flaky"]
prompt = """
mock: until-file rounds.txt 3
"""
until = ["mock-verify", "rounds.txt", "3"]
rounds = 3

[[tasks]]
id = "broken"
needs = ["improve"]
prompt = """
mock: exit 3
"""
`,
});

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

// The line ends of a journal: where a snapshot after each record would end.
function lineEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, nl + 1)) ends.push(nl + 1);
  return ends;
}

// The snapshot a coordinator would write after the record ending at `size`: the fold of exactly the bytes before it.
async function snapshotAt(journal: string, bytes: Buffer, size: number, lastSeq: number): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'fold-prefix-'));
  try {
    const prefix = join(scratch, 'journal.jsonl');
    writeFileSync(prefix, bytes.subarray(0, size));
    const { view } = await readRun(prefix);
    assert.ok(writeSnapshot(journal, view, { lastSeq, size, sha256: sha256(bytes.subarray(0, size)) }), `snapshot at ${size} written`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function sameRead(a: RunRead, b: RunRead, what: string): void {
  assert.ok(isDeepStrictEqual(a.view, b.view), `${what}: the fold differs from the journal read in full`);
  assert.equal(
    [a.status, a.scan?.count, a.scan?.lastSeq, a.scan?.sha256],
    [b.status, b.scan?.count, b.scan?.lastSeq, b.scan?.sha256],
    what,
  );
}

// The fixture's run: flaky retried, the loop killed after round 1 and resumed, broken stopped.
async function richRun(f: Fixture): Promise<string> {
  const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:round-done:improve' } });
  assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
  const resumed = await runplan(['run', f.plan], f);
  assert.is(resumed.exitCode, 1, resumed.stderr);
  const rs = await records(f.repo, 'fold');
  for (const type of ['repair-decided', 'round-done', 'coordinator-crashed', 'checkpoint', 'run-failed'])
    assert.ok(ofType(rs, type).length > 0, `the journal has a ${type}`);
  return journalPath(f.repo, 'fold');
}

test(
  'a snapshot after any record: the journal read from it folds exactly as read in full',
  withPlan(PLAN, { timeoutMs: 180_000 }, async (f) => {
    const journal = await richRun(f);
    const bytes = readFileSync(journal);
    const full = await readRun(journal, { digest: true });
    const ends = lineEnds(bytes);
    for (const [seq, size] of ends.entries()) {
      await snapshotAt(journal, bytes, size, seq);
      const read = await readRun(journal, { digest: true, snapshot: true });
      assert.is(read.snapshotBytes, size, `the snapshot after seq ${seq} is taken`);
      sameRead(read, full, `snapshot after seq ${seq}`);
    }
    assert.ok(ends.length > 30, `${ends.length} records`);
  }),
);

test(
  'a snapshot is not taken for other bytes, with a broken checksum, from other fold code, or past the journal’s end',
  withPlan(PLAN, { timeoutMs: 180_000 }, async (f) => {
    const journal = await richRun(f);
    const bytes = readFileSync(journal);
    const full = await readRun(journal, { digest: true });
    const ends = lineEnds(bytes);
    // Taken after the first few records: before any checkpoint, so one taken wrongly shows.
    await snapshotAt(journal, bytes, ends[3]!, 3);
    const good = readFileSync(snapshotPath(journal));
    assert.is((await readRun(journal, { snapshot: true })).snapshotBytes, ends[3], 'as written, it is taken');
    const nl = good.indexOf(10);
    const meta = JSON.parse(good.subarray(0, nl).toString('utf8')) as Record<string, unknown>;
    const withMeta = (change: Record<string, unknown>): Buffer =>
      Buffer.concat([Buffer.from(`${JSON.stringify({ ...meta, ...change })}\n`), good.subarray(nl + 1)]);
    const payload = good.subarray(nl + 1).toString('utf8');
    const changed = payload.replace('"attemptsTotal":["value",', '"attemptsTotal":["value",9');
    assert.is.not(changed, payload);
    const cases: Array<[string, Buffer]> = [
      ['the bytes it names are not the journal’s', withMeta({ sha256: sha256(Buffer.from('another journal')) })],
      ['it claims the whole journal (its bytes hash to another digest)', withMeta({ size: bytes.length, lastSeq: ends.length - 1 })],
      ['its payload changed', Buffer.concat([good.subarray(0, nl + 1), Buffer.from(changed)])],
      ['another fold code made it', withMeta({ code: '0'.repeat(32) })],
      ['another format', withMeta({ format: 2 })],
      ['it ends past the journal', withMeta({ size: bytes.length + 10 })],
      ['it is torn', good.subarray(0, Math.floor(good.length / 2))],
    ];
    for (const [what, snapshot] of cases) {
      writeFileSync(snapshotPath(journal), snapshot);
      const read = await readRun(journal, { digest: true, snapshot: true });
      assert.is(read.snapshotBytes, 0, `${what}: not taken`);
      sameRead(read, full, what);
    }
  }),
);

// The loop killed after round 1 with snapshots from the first byte on; then the coordinator's
// last snapshot replaced by the fold of the same bytes with 100 attempts too many (what the
// run's receipt counts from), under the digest `sha` gives for those bytes.
async function crashAndPlant(f: Fixture, sha: (prefix: Buffer) => string): Promise<{ journal: string }> {
  const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:round-done:improve' } });
  assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
  const journal = journalPath(f.repo, 'fold');
  const bytes = readFileSync(journal);
  const fold = readFileSync(snapshotPath(journal));
  const meta = JSON.parse(fold.subarray(0, fold.indexOf(10)).toString('utf8')) as { size: number; sha256: string; lastSeq: number };
  assert.ok(meta.size > bytes.length / 1.5 && meta.size <= bytes.length, `the last snapshot covers ${meta.size} of ${bytes.length} bytes`);
  assert.is(meta.sha256, sha256(bytes.subarray(0, meta.size)), 'of exactly the journal’s first bytes');
  // The bin's fold code reads the coordinator's and makes the planted one: the library bundle,
  // whose fold code is the CLI's (the two share the build's id).
  const bundle = (await import(new URL('../lib/index.js', import.meta.url).href)) as {
    readRun: typeof readRun;
    writeFoldSnapshot: typeof writeSnapshot;
  };
  const fromSnapshot = await bundle.readRun(journal, { digest: true, snapshot: true });
  assert.is(fromSnapshot.snapshotBytes, meta.size, 'the coordinator’s own snapshot is taken');
  sameRead(fromSnapshot, await bundle.readRun(journal, { digest: true }), 'the coordinator’s snapshot');
  const prefix = join(f.repo.path, '.git', 'fold-prefix.jsonl');
  writeFileSync(prefix, bytes.subarray(0, meta.size));
  const { view } = await bundle.readRun(prefix);
  view.attemptsTotal += 100;
  assert.ok(bundle.writeFoldSnapshot(journal, view, { lastSeq: meta.lastSeq, size: meta.size, sha256: sha(bytes.subarray(0, meta.size)) }));
  return { journal };
}

// The resumed run's receipt: how many attempts it counts, and how many the journal started.
async function resumeCounts(f: Fixture): Promise<{ receipt: number; started: number }> {
  const resumed = await runplan(['run', f.plan], f);
  assert.is(resumed.exitCode, 1, resumed.stderr);
  const ran = readLedger(f.ledger).map((e) => `${e.task}.${e.attempt}`);
  assert.equal(
    ran.filter((t) => t.startsWith('flaky.')),
    ['flaky.1', 'flaky.2'],
    'flaky, checkpointed before the crash, is not run again',
  );
  assert.ok(ran.includes('broken.1'), 'the run went on past the loop');
  const rs = await records(f.repo, 'fold');
  return { receipt: Number(ofType(rs, 'run-failed')[0]!.attempts), started: ofType(rs, 'attempt-started').length };
}

test(
  'the coordinator writes snapshots as its journal grows, and a resume through the bin starts from the one that matches the journal',
  withPlan(PLAN, { timeoutMs: 180_000, env: { RUNPLAN_FOLD_SNAPSHOT_BYTES: '1' } }, async (f) => {
    await crashAndPlant(f, sha256);
    const counts = await resumeCounts(f);
    assert.is(counts.receipt, counts.started + 100, 'the receipt counts from the snapshot’s fold');
  }),
);

test(
  'a resume through the bin does not believe a snapshot of other bytes: it reads the journal in full',
  withPlan(PLAN, { timeoutMs: 180_000, env: { RUNPLAN_FOLD_SNAPSHOT_BYTES: '1' } }, async (f) => {
    await crashAndPlant(f, () => sha256(Buffer.from('not these bytes')));
    const counts = await resumeCounts(f);
    assert.is(counts.receipt, counts.started, 'the receipt counts from the journal');
  }),
);

test(
  'RUNPLAN_FOLD_SNAPSHOT_BYTES=0: no snapshot is written',
  withPlan(PLAN, { timeoutMs: 180_000, env: { RUNPLAN_FOLD_SNAPSHOT_BYTES: '0' } }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    assert.not.ok(existsSync(snapshotPath(journalPath(f.repo, 'fold'))));
  }),
);

test.run();
