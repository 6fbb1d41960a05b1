import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import { processIdentity } from '@runplan/settle';
import { createDataDir, createRunDir, holdingDirectory, MARK_FILE, parseMark, renderPath } from '../src/index.js';
import { plantMark } from './support.js';

const mode = (path: string) => statSync(path).mode & 0o777;

test(
  'createRunDir creates parents and a 0700 leaf with a mark naming template, run id, time and creator',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const template = `${tmp.path}/{{plan.slug}}/runs/{{run.id}}.{{task.id}}.{{run.attempt}}`;
      const now = new Date('2026-11-29T07:55:00.000Z');
      const vars = { 'plan.slug': 'auth', 'run.id': 'r1', 'task.id': 'api', 'run.attempt': 1 };
      const created = await createRunDir(template, vars, { now });
      assert.ok(created.ok);
      if (!created.ok) return;
      const leaf = join(tmp.path, 'auth', 'runs', 'r1.api.1');
      assert.equal(created.value, { path: leaf, reused: false, shared: false });
      assert.is(mode(leaf), 0o700);
      assert.is(mode(join(tmp.path, 'auth')), 0o700);
      const mark = parseMark(readFileSync(join(leaf, MARK_FILE), 'utf8'));
      assert.ok(mark);
      assert.is(mark?.template, template);
      assert.is(mark?.runId, 'r1');
      assert.is(mark?.createdAt, now.toISOString());
      assert.is(mark?.kind, 'run');
      assert.equal(mark?.creator, processIdentity(process.pid));
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'the leaf is 0700 under a permissive and under a restrictive umask',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    const previous = process.umask();
    try {
      for (const mask of [0o000, 0o022, 0o277, 0o777]) {
        process.umask(mask);
        const created = await createRunDir(`${tmp.path}/m${mask.toString(8)}/deep/{{run.id}}`, { 'run.id': 'r' });
        const data = created.ok ? await createDataDir(created.value.path, 'r') : undefined;
        process.umask(previous);
        assert.ok(created.ok, `umask ${mask.toString(8)}`);
        if (!created.ok) continue;
        assert.is(mode(created.value.path), 0o700, `leaf under umask ${mask.toString(8)}`);
        assert.is(mode(join(tmp.path, `m${mask.toString(8)}`)), 0o700, `parent under umask ${mask.toString(8)}`);
        assert.ok(existsSync(join(created.value.path, MARK_FILE)));
        assert.ok(data?.ok);
        if (data?.ok) {
          assert.is(mode(data.value.path), 0o700);
          assert.is(mode(join(created.value.path, '.harness-run')), 0o700);
        }
      }
    } finally {
      process.umask(previous);
      tmp.cleanup();
    }
  }),
);

test(
  'the same run reuses its marked directory (crash restart); another run is refused',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const template = `${tmp.path}/runs/{{task.id}}`;
      const first = await createRunDir(template, { 'run.id': 'r1', 'task.id': 'api' });
      assert.ok(first.ok);
      writeFileSync(join(tmp.path, 'runs', 'api', 'work.txt'), 'kept');
      const again = await createRunDir(template, { 'run.id': 'r1', 'task.id': 'api' });
      assert.equal(again.ok && again.value, { path: join(tmp.path, 'runs', 'api'), reused: true, shared: false });
      assert.ok(existsSync(join(tmp.path, 'runs', 'api', 'work.txt')));
      const other = await createRunDir(template, { 'run.id': 'r2', 'task.id': 'api' });
      assert.not.ok(other.ok);
      if (!other.ok) {
        assert.is(other.error.reason, 'exists_other_run');
        assert.is(other.error.path, join(tmp.path, 'runs', 'api'));
      }
      // Whitespace inside braces is the same template.
      const spaced = await createRunDir(`${tmp.path}/runs/{{ task.id }}`, { 'run.id': 'r1', 'task.id': 'api' });
      assert.ok(spaced.ok && spaced.value.reused);
      // The same path rendered from another template is not ours to reuse.
      const foreign = await createRunDir(`${tmp.path}/runs/{{run.id}}`, { 'run.id': 'api' });
      assert.is(foreign.ok ? 'ok' : foreign.error.reason, 'exists_other_template');
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'an unmarked existing leaf (a crash between mkdir and mark) is refused with a fix in the hint',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const leaf = join(tmp.path, 'runs', 'r1');
      mkdirSync(leaf, { recursive: true });
      const result = await createRunDir(`${tmp.path}/runs/{{run.id}}`, { 'run.id': 'r1' });
      assert.not.ok(result.ok);
      if (!result.ok) {
        assert.is(result.error.reason, 'exists_unmarked');
        assert.is(result.error.path, leaf);
        assert.match(result.error.hint ?? '', `rmdir ${leaf}`);
      }
      assert.not.ok(existsSync(join(leaf, MARK_FILE)), 'never adopts an unmarked directory');
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'a symlink, a file or a bad mark at the leaf is refused',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      mkdirSync(join(tmp.path, 'runs'));
      mkdirSync(join(tmp.path, 'elsewhere'));
      plantMark(join(tmp.path, 'elsewhere'), {
        template: `${tmp.path}/runs/{{run.id}}`,
        runId: 'link',
        createdAt: new Date().toISOString(),
      });
      symlinkSync(join(tmp.path, 'elsewhere'), join(tmp.path, 'runs', 'link'));
      writeFileSync(join(tmp.path, 'runs', 'file'), '');
      mkdirSync(join(tmp.path, 'runs', 'garbled'));
      writeFileSync(join(tmp.path, 'runs', 'garbled', MARK_FILE), '{"template":');
      const template = `${tmp.path}/runs/{{run.id}}`;
      for (const [id, reason] of [
        ['link', 'exists_not_directory'],
        ['file', 'exists_not_directory'],
        ['garbled', 'bad_mark'],
      ] as const) {
        const result = await createRunDir(template, { 'run.id': id });
        assert.is(result.ok ? 'ok' : result.error.reason, reason, id);
      }
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'template errors create nothing',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const cases: Array<[string, Record<string, string>, string]> = [
        [`${tmp.path}/a/{{run.id}}`, { 'run.id': '..' }, 'bad_identifier'],
        [`${tmp.path}/a/{{run.datadir}}`, { 'run.id': 'r', 'run.datadir': '/x' }, 'not_allowed_in_tier'],
        [`${tmp.path}/a/{{event.path}}`, { 'run.id': 'r' }, 'untrusted_variable'],
        [`${tmp.path}/a/{{run.id}}/b`, { 'run.id': 'r' }, 'varying_not_last'],
        [`${tmp.path}/a/{{task.id}}`, { 'task.id': 't' }, 'missing_value'],
        [`${tmp.path}/a/{{task.id}}`, { 'task.id': 't', 'run.id': '../up' }, 'bad_identifier'],
        [`${tmp.path}/a/{{run.id`, { 'run.id': 'r' }, 'unterminated'],
        [`relative/{{run.id}}`, { 'run.id': 'r' }, 'not_absolute'],
      ];
      for (const [template, vars, reason] of cases) {
        const result = await createRunDir(template, vars);
        assert.is(result.ok ? 'ok' : result.error.reason, reason, template);
      }
      assert.equal(readdirSync(tmp.path), []);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  '~ at the start expands to home',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const created = await createRunDir('~/runs/{{run.id}}', { 'run.id': 'r1' }, { home: tmp.path });
      assert.equal(created.ok && created.value.path, join(tmp.path, 'runs', 'r1'));
      assert.equal(renderPath('~/runs/{{run.id}}', { 'run.id': 'r1' }, { home: tmp.path }), {
        ok: true,
        value: join(tmp.path, 'runs', 'r1'),
      });
      assert.equal(holdingDirectory('~/runs/{{run.id}}', {}, { home: tmp.path }), { ok: true, value: join(tmp.path, 'runs') });
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'a shared template (nothing varies) is ensured, never marked',
  withTimeout(10_000, async () => {
    const tmp = tempDir();
    try {
      const first = await createRunDir(`${tmp.path}/{{plan.slug}}/shared`, { 'plan.slug': 's', 'run.id': 'r1' });
      assert.equal(first.ok && first.value, { path: join(tmp.path, 's', 'shared'), reused: false, shared: true });
      assert.is(mode(join(tmp.path, 's', 'shared')), 0o700);
      assert.not.ok(existsSync(join(tmp.path, 's', 'shared', MARK_FILE)));
      const second = await createRunDir(`${tmp.path}/{{plan.slug}}/shared`, { 'plan.slug': 's', 'run.id': 'r2' });
      assert.equal(second.ok && second.value.reused, true);
    } finally {
      tmp.cleanup();
    }
  }),
);

test('parseMark accepts only whole marks', () => {
  const whole = {
    template: '/t/{{run.id}}',
    runId: 'r',
    createdAt: '2026-11-29T07:55:00.000Z',
    creator: { pid: 1, startTime: 2, bootId: 'b', host: 'h' },
  };
  assert.equal(parseMark(JSON.stringify(whole)), whole);
  assert.equal(parseMark(JSON.stringify({ ...whole, kind: 'datadir' }))?.kind, 'datadir');
  const broken: unknown[] = [
    { ...whole, kind: 'other' },
    { ...whole, createdAt: 'yesterday' },
    { ...whole, runId: 7 },
    { ...whole, creator: { pid: 1 } },
    { ...whole, creator: null },
    { template: '/t' },
    [],
    null,
  ];
  for (const value of broken) assert.is(parseMark(JSON.stringify(value)), undefined, JSON.stringify(value));
  assert.is(parseMark('{"template":'), undefined);
});

test('holdingDirectory: the parent of the varying element, with and without harness constants', () => {
  assert.equal(holdingDirectory('/srv/{{harness.name}}/runs/{{run.id}}.{{run.attempt}}', { 'harness.name': 'nightly' }), {
    ok: true,
    value: '/srv/nightly/runs',
  });
  assert.equal(holdingDirectory('/srv/runs/{{run.date}}-{{run.id}}', {}), { ok: true, value: '/srv/runs' });
  assert.equal(holdingDirectory('/srv/{{plan.slug}}/work', { 'plan.slug': 'p' }), { ok: true, value: '/srv/p/work' });
  const missing = holdingDirectory('/srv/{{harness.name}}/{{run.id}}', {});
  assert.equal(missing.ok ? undefined : [missing.error.reason, missing.error.variable], ['missing_value', 'harness.name']);
  const early = holdingDirectory('/srv/{{run.id}}/tree', { 'run.id': 'r' });
  assert.equal(early.ok ? undefined : [early.error.reason, early.error.element], ['varying_not_last', '{{run.id}}']);
});

test.run();
