import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import { createDataDir, createRunDir, DATADIR_TEMPLATE, MARK_FILE, prune } from '../src/index.js';
import { at, keptByName, plantMark, plantMix } from './support.js';

test(
  'prune removes only real, matching, marked, not-in-flight dirs of this template, oldest first',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const mix = plantMix(tmp.path);
      const report = await prune(mix.template, { 'plan.slug': 'p' }, { retain: 2, inFlight: mix.inFlight });
      assert.ok(report.ok);
      if (!report.ok) return;
      assert.equal(
        report.value.removed,
        mix.removed.map((name) => join(mix.holding, name)),
      );
      assert.equal(keptByName(report.value), mix.kept);
      assert.equal(report.value.failed, []);
      for (const name of mix.removed) assert.not.ok(existsSync(join(mix.holding, name)), name);
      for (const name of Object.keys(mix.kept)) assert.ok(existsSync(join(mix.holding, name)), name);
      assert.ok(existsSync(join(tmp.path, 'outside', 'target', MARK_FILE)), 'a symlink target is never touched');
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'a removed run dir goes with everything in it, nested dirs and symlinks as themselves: what a symlink points at stays',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const template = `${tmp.path}/runs/{{run.id}}`;
      const made = await createRunDir(template, { 'run.id': 'old' });
      assert.ok(made.ok);
      if (!made.ok) return;
      mkdirSync(join(tmp.path, 'outside', 'deep'), { recursive: true });
      writeFileSync(join(tmp.path, 'outside', 'deep', 'keep.txt'), 'keep\n');
      mkdirSync(join(made.value.path, 'tree', 'a', 'b'), { recursive: true });
      writeFileSync(join(made.value.path, 'tree', 'a', 'b', 'file.txt'), 'x\n');
      symlinkSync(join(tmp.path, 'outside'), join(made.value.path, 'tree', 'to-dir'));
      symlinkSync(join(tmp.path, 'outside', 'deep', 'keep.txt'), join(made.value.path, 'tree', 'a', 'to-file'));
      symlinkSync(join(tmp.path, 'nowhere'), join(made.value.path, 'dangling'));
      const report = await prune(template, {}, { retain: 0 });
      assert.ok(report.ok);
      if (!report.ok) return;
      assert.equal(report.value.removed, [made.value.path]);
      assert.equal(report.value.failed, []);
      assert.not.ok(existsSync(made.value.path));
      assert.is(readFileSync(join(tmp.path, 'outside', 'deep', 'keep.txt'), 'utf8'), 'keep\n');
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'dry run reports the same and removes nothing; retain 0 removes all of ours and nothing else',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const mix = plantMix(tmp.path);
      const before = readdirSync(mix.holding).sort();
      const dry = await prune(mix.template, { 'plan.slug': 'p' }, { retain: 2, inFlight: mix.inFlight, dryRun: true });
      assert.ok(dry.ok && dry.value.dryRun);
      if (dry.ok)
        assert.equal(
          dry.value.removed,
          mix.removed.map((name) => join(mix.holding, name)),
        );
      assert.equal(readdirSync(mix.holding).sort(), before);
      const all = await prune(mix.template, { 'plan.slug': 'p' }, { retain: 0, inFlight: mix.inFlight });
      assert.ok(all.ok);
      if (all.ok)
        assert.equal(
          all.value.removed,
          ['r2.1', 'r1.1', 'r3.1', 'r4.1'].map((name) => join(mix.holding, name)),
        );
      assert.equal(
        readdirSync(mix.holding).sort(),
        before.filter((name) => !['r1.1', 'r2.1', 'r3.1', 'r4.1'].includes(name)),
      );
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'a crash between mkdir and mark leaves an unmarked leaf that prune never removes',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const template = `${tmp.path}/runs/{{run.id}}`;
      const done = await createRunDir(template, { 'run.id': 'done' });
      assert.ok(done.ok);
      mkdirSync(join(tmp.path, 'runs', 'crashed'));
      const report = await prune(template, {}, { retain: 0 });
      assert.ok(report.ok);
      if (report.ok) {
        assert.equal(report.value.removed, [join(tmp.path, 'runs', 'done')]);
        assert.equal(keptByName(report.value), { crashed: 'unmarked' });
      }
      assert.ok(existsSync(join(tmp.path, 'runs', 'crashed')));
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'prune is refused when the varying element is not last, on a shared workdir, and for a bad retain',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      plantMark(join(tmp.path, 'r1', 'tree'), { template: `${tmp.path}/{{run.id}}/tree`, runId: 'r1', createdAt: at(0) });
      const early = await prune(`${tmp.path}/{{run.id}}/tree`, {}, { retain: 0 });
      assert.not.ok(early.ok);
      if (!early.ok) {
        assert.is(early.error.reason, 'varying_not_last');
        assert.is(early.error.element, '{{run.id}}');
        assert.match(early.error.message, '"{{run.id}}"');
      }
      const shared = await prune(`${tmp.path}/{{plan.slug}}`, { 'plan.slug': 'r1' }, { retain: 0 });
      assert.is(shared.ok ? 'ok' : shared.error.reason, 'shared_workdir');
      for (const retain of [-1, 1.5, Number.NaN]) {
        const bad = await prune(`${tmp.path}/{{run.id}}`, {}, { retain });
        assert.is(bad.ok ? 'ok' : bad.error.reason, 'bad_retain');
      }
      const untrusted = await prune(`${tmp.path}/{{event.path}}`, {}, { retain: 0 });
      assert.is(untrusted.ok ? 'ok' : untrusted.error.reason, 'untrusted_variable');
      assert.ok(existsSync(join(tmp.path, 'r1', 'tree', MARK_FILE)), 'nothing removed');
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'prune of a holding directory that does not exist yet is an empty report',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const report = await prune(`${tmp.path}/none/{{run.id}}`, {}, { retain: 1 });
      assert.equal(report.ok && report.value.removed, []);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'a constant in the last element must match its value exactly',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const template = `${tmp.path}/runs/{{plan.slug}}-{{run.id}}`;
      plantMark(join(tmp.path, 'runs', 'mine-r1'), { template, runId: 'r1', createdAt: at(0) });
      plantMark(join(tmp.path, 'runs', 'theirs-r1'), { template, runId: 'r1', createdAt: at(0) });
      const report = await prune(template, { 'plan.slug': 'mine' }, { retain: 0 });
      assert.ok(report.ok);
      if (report.ok) {
        assert.equal(report.value.removed, [join(tmp.path, 'runs', 'mine-r1')]);
        assert.equal(keptByName(report.value), { 'theirs-r1': 'not_matching' });
      }
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'createDataDir: <workdir>/.harness-run/<run id>, reused by the same run, bounded by keepRuns',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const workdir = join(tmp.path, 'shared');
      mkdirSync(workdir);
      const base = join(workdir, '.harness-run');
      for (const [id, minutes] of [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ] as const) {
        const made = await createDataDir(workdir, id, { now: new Date(at(minutes)) });
        assert.equal(made.ok && made.value, { path: join(base, id), reused: false, pruned: [], pruneFailed: [] });
      }
      const again = await createDataDir(workdir, 'c');
      assert.ok(again.ok && again.value.reused);
      // Not ours, or not ours to remove, however old.
      mkdirSync(join(base, 'unmarked'));
      plantMark(join(tmp.path, 'elsewhere'), { template: DATADIR_TEMPLATE, runId: 'link', createdAt: at(0), kind: 'datadir' });
      symlinkSync(join(tmp.path, 'elsewhere'), join(base, 'link'));
      plantMark(join(base, 'runkind'), { template: DATADIR_TEMPLATE, runId: 'runkind', createdAt: at(0), kind: 'run' });
      plantMark(join(base, 'renamed'), { template: DATADIR_TEMPLATE, runId: 'original', createdAt: at(0), kind: 'datadir' });
      plantMark(join(base, '.hidden'), { template: DATADIR_TEMPLATE, runId: '.hidden', createdAt: at(0), kind: 'datadir' });
      const made = await createDataDir(workdir, 'd', { keepRuns: 2, inFlight: [join(base, 'a')], now: new Date(at(4)) });
      assert.ok(made.ok);
      if (!made.ok) return;
      assert.equal(made.value.pruned, [join(base, 'b')]);
      assert.equal(readdirSync(base).sort(), ['.hidden', 'a', 'c', 'd', 'link', 'renamed', 'runkind', 'unmarked']);
      assert.ok(existsSync(join(tmp.path, 'elsewhere', MARK_FILE)));
      const tighter = await createDataDir(workdir, 'e', { keepRuns: 1, now: new Date(at(5)) });
      assert.equal(tighter.ok && tighter.value.pruned, [join(base, 'a'), join(base, 'c'), join(base, 'd')]);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'createDataDir refuses a missing workdir, a bad run id, a symlinked .harness-run and keepRuns < 1',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const missing = await createDataDir(join(tmp.path, 'nope'), 'r1');
      assert.is(missing.ok ? 'ok' : missing.error.reason, 'workdir_missing');
      assert.not.ok(existsSync(join(tmp.path, 'nope')));
      for (const id of ['..', '', 'a/b', '.x']) {
        const bad = await createDataDir(tmp.path, id);
        assert.is(bad.ok ? 'ok' : bad.error.reason, 'bad_identifier', id);
      }
      const zero = await createDataDir(tmp.path, 'r1', { keepRuns: 0 });
      assert.is(zero.ok ? 'ok' : zero.error.reason, 'bad_retain');
      assert.equal(readdirSync(tmp.path), []);
      mkdirSync(join(tmp.path, 'real'));
      mkdirSync(join(tmp.path, 'w'));
      symlinkSync(join(tmp.path, 'real'), join(tmp.path, 'w', '.harness-run'));
      const linked = await createDataDir(join(tmp.path, 'w'), 'r1');
      assert.is(linked.ok ? 'ok' : linked.error.reason, 'exists_not_directory');
      assert.equal(readdirSync(join(tmp.path, 'real')), []);
    } finally {
      tmp.cleanup();
    }
  }),
);

test.run();
