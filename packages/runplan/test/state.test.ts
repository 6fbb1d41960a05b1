// The slug reads `runplan status` is built on: the run list in start order (every header
// read at once) and the disk a slug's tree uses (walked synchronously).
import { lstatSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, runBin, tempDir, withCleanup, withTimeout } from '@runplan/test-fixtures';
import { openWriter } from '@runplan/journal';
import { listRuns, slugPaths, START_ORDER_FIELD } from '../src/index.js';
import { diskUsage } from '../src/host/state.js';

const dir = tempDir('runplan-state-');
test.after(() => dir.cleanup());

test(
  'listRuns orders 40 runs by their headers start order, not by name, and skips dirs without a journal or with a broken header',
  withTimeout(30_000, async () => {
    const slug = slugPaths(join(dir.path, 'state'), 'many');
    // Names sort the opposite way to the start order.
    const ids = Array.from(
      { length: 40 },
      (_, i) => `20261201T1200${String(59 - i).padStart(2, '0')}Z-${(i * 7).toString(16).padStart(4, '0')}`,
    );
    await Promise.all(
      ids.map(async (id, i) => {
        mkdirSync(join(slug.dir, id), { recursive: true });
        const opened = await openWriter(join(slug.dir, id, 'journal.jsonl'), {
          create: true,
          runId: id,
          headerFields: { [START_ORDER_FIELD]: i + 1 },
        });
        if (!opened.ok) throw new Error(opened.error.message);
        await opened.value.close();
      }),
    );
    mkdirSync(join(slug.dir, '20261201T120000Z-ffff')); // a run dir without a journal
    mkdirSync(join(slug.dir, '20261201T110000Z-eeee'));
    writeFileSync(join(slug.dir, '20261201T110000Z-eeee', 'journal.jsonl'), 'not a journal\n');
    const runs = await listRuns(slug);
    // The broken header has no start order: it sorts first (runs without one come first).
    assert.equal(
      runs.map((r) => r.runId),
      ['20261201T110000Z-eeee', ...ids],
    );
    assert.equal(
      runs.map((r) => r.startOrder),
      [null, ...ids.map((_, i) => i + 1)],
    );
    assert.ok(runs.slice(1).every((r) => typeof r.createdAt === 'string'));
  }),
);

test(
  'diskUsage sums the bytes of every file under a tree, at every depth, and counts a symlinked directory once, as a link',
  withTimeout(10_000, async () => {
    const root = join(dir.path, 'tree');
    let expected = 0;
    for (let a = 0; a < 5; a++)
      for (let b = 0; b < 4; b++) {
        const d = join(root, `a${a}`, `b${b}`, 'c');
        mkdirSync(d, { recursive: true });
        writeFileSync(join(d, 'f'), Buffer.alloc(a * 100 + b));
        writeFileSync(join(root, `a${a}`, `g${b}`), Buffer.alloc(7));
        expected += a * 100 + b + 7;
      }
    mkdirSync(join(root, 'empty'));
    writeFileSync(join(root, 'top'), 'x'.repeat(1000));
    expected += 1000;
    assert.is(await diskUsage(root), expected);
    // A link to a directory is not walked into (its target's files are not counted twice).
    symlinkSync(join(root, 'a1'), join(root, 'link'));
    assert.is(await diskUsage(root), expected + lstatSync(join(root, 'link')).size, 'the link counts as itself');
    assert.is(await diskUsage(join(dir.path, 'missing')), 0);
  }),
);

test(
  'runplan status: a symlink in the state dir counts as itself, never its target; a link to a dir, to / or in a loop is not walked',
  withCleanup(
    30_000,
    () => tempDir('runplan-state-links-'),
    async (scratch) => {
      const state = join(scratch.path, 'state');
      const runDir = join(state, 'links', '20261201T120000Z-abcd');
      mkdirSync(runDir, { recursive: true });
      const journal = join(runDir, 'journal.jsonl');
      const opened = await openWriter(journal, { create: true, runId: '20261201T120000Z-abcd', headerFields: { [START_ORDER_FIELD]: 1 } });
      if (!opened.ok) throw new Error(opened.error.message);
      await opened.value.close();
      // Outside the state dir: a 4 MiB file and a directory holding another.
      const outside = join(scratch.path, 'outside');
      mkdirSync(outside);
      writeFileSync(join(outside, 'big'), Buffer.alloc(4 << 20));
      writeFileSync(join(outside, 'also-big'), Buffer.alloc(4 << 20));
      const links = { 'to-file': join(outside, 'big'), 'to-dir': outside, 'to-root': '/', loop: join(runDir, 'loop') };
      for (const [name, target] of Object.entries(links)) symlinkSync(target, join(runDir, name));
      const expected = statSync(journal).size + Object.keys(links).reduce((n, name) => n + lstatSync(join(runDir, name)).size, 0);
      const r = await runBin(binPath('runplan'), ['status', 'links', '--json', '--state-dir', state], { timeoutMs: 20_000 });
      assert.is(r.exitCode, 0, r.stderr);
      const row = JSON.parse(r.stdout.trim()) as { diskBytes: number };
      assert.is(row.diskBytes, expected, 'the journal and the links themselves, nothing they point at');
    },
  ),
);

test.run();
