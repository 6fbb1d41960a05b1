import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  checkTemplate,
  isIdentifier,
  parseTemplate,
  render,
  renderArgv,
  templateVariables,
  type Tier,
  type TemplateVars,
} from '../src/index.js';

const good: TemplateVars = {
  'harness.name': 'nightly',
  'plan.slug': 'auth-refactor',
  'run.id': '20261129T075500Z-4f2a',
  'task.id': 'api',
  'run.attempt': 2,
  'run.date': '2026-11-29',
  'run.time': '075500',
  'run.started_at': '20261129T075500Z',
  model: 'claude-sonnet-4.5',
  'harness.workdir': '/srv/work/tree',
  'package.dir': '/srv/repo',
  'run.datadir': '/srv/work/.harness-run/r1',
  'event.file': '/tmp/event.json',
  'run.outcome': 'timed_out',
  'run.exit_code': 124,
  'budget.remaining_usd': '12.34',
  'budget.remaining_tokens': 150000,
};

// Which tiers may name each variable (DESIGN.md "Templates").
const allowed: Record<string, Tier[]> = {
  'harness.name': ['workdir', 'pre_run', 'post_run'],
  'plan.slug': ['workdir', 'pre_run', 'post_run'],
  'run.id': ['workdir', 'pre_run', 'post_run'],
  'task.id': ['workdir', 'pre_run', 'post_run'],
  'run.attempt': ['workdir', 'pre_run', 'post_run'],
  'run.date': ['workdir', 'pre_run', 'post_run'],
  'run.time': ['workdir', 'pre_run', 'post_run'],
  'run.started_at': ['workdir', 'pre_run', 'post_run'],
  model: ['pre_run', 'post_run'],
  'harness.workdir': ['pre_run', 'post_run'],
  'package.dir': ['pre_run', 'post_run'],
  'run.datadir': ['pre_run', 'post_run'],
  'event.file': ['pre_run', 'post_run'],
  'run.outcome': ['post_run'],
  'run.exit_code': ['post_run'],
  'budget.remaining_usd': ['pre_run'],
  'budget.remaining_tokens': ['pre_run'],
};
const tiers: Tier[] = ['workdir', 'pre_run', 'post_run'];

test('every variable renders in the tiers that allow it and is refused in the others', () => {
  for (const [name, okTiers] of Object.entries(allowed)) {
    for (const tier of tiers) {
      const result = render(`x-{{ ${name} }}-y`, good, tier);
      if (okTiers.includes(tier)) {
        assert.ok(result.ok, `${name} in ${tier}`);
        if (result.ok) assert.is(result.value, `x-${String(good[name])}-y`);
      } else {
        assert.not.ok(result.ok, `${name} in ${tier}`);
        if (!result.ok) {
          assert.is(result.error.reason, 'not_allowed_in_tier', `${name} in ${tier}`);
          assert.is(result.error.variable, name);
        }
      }
      // checkTemplate (no values) agrees with render.
      assert.is(checkTemplate(`{{${name}}}`, tier).ok, okTiers.includes(tier), `check ${name} in ${tier}`);
    }
  }
});

test('a workdir template naming run.datadir or harness.workdir is refused', () => {
  for (const name of ['run.datadir', 'harness.workdir', 'package.dir', 'event.file']) {
    const result = checkTemplate(`/srv/runs/{{${name}}}`, 'workdir');
    assert.not.ok(result.ok);
    if (!result.ok) {
      assert.is(result.error.reason, 'not_allowed_in_tier');
      assert.is(result.error.variable, name);
      assert.match(result.error.message, 'workdir');
    }
  }
});

test('event.path and event.text are refused in every tier; event.file only in hook tiers', () => {
  for (const tier of tiers) {
    for (const name of ['event.path', 'event.text', 'event.body']) {
      const result = render(`{{${name}}}`, { ...good, [name]: 'harmless' }, tier);
      assert.not.ok(result.ok);
      if (!result.ok) {
        assert.is(result.error.reason, 'untrusted_variable', `${name} in ${tier}`);
        assert.is(result.error.variable, name);
      }
    }
  }
  assert.ok(render('{{event.file}}', good, 'pre_run').ok);
  assert.ok(render('{{event.file}}', good, 'post_run').ok);
  assert.not.ok(render('{{event.file}}', good, 'workdir').ok);
});

test('identifiers: .., /, empty and leading-dot values are refused before rendering', () => {
  for (const bad of ['..', '.', '', '/', 'a/b', '../x', '.hidden', '-flag', 'a b', 'x\ny', 'x\0y']) {
    for (const name of ['run.id', 'task.id', 'harness.name', 'plan.slug']) {
      for (const tier of tiers) {
        const result = render(`/srv/{{${name}}}`, { ...good, [name]: bad }, tier);
        assert.not.ok(result.ok, `${name}=${JSON.stringify(bad)} in ${tier}`);
        if (!result.ok) {
          assert.is(result.error.reason, 'bad_identifier');
          assert.is(result.error.variable, name);
        }
      }
    }
    assert.not.ok(isIdentifier(bad), JSON.stringify(bad));
    const model = render('{{model}}', { ...good, model: bad }, 'pre_run');
    assert.is(model.ok ? 'ok' : model.error.reason, 'bad_identifier');
  }
  for (const fine of ['a', 'A0', '0', 'run.1', 'x_y-z', 'a..b']) assert.ok(isIdentifier(fine), fine);
});

test('integers, dates and outcomes are checked against their class', () => {
  const refused: Array<[string, string | number, Tier]> = [
    ['run.attempt', 'two', 'workdir'],
    ['run.attempt', -1, 'workdir'],
    ['run.attempt', 1.5, 'pre_run'],
    ['run.exit_code', '1x', 'post_run'],
    ['run.date', '2026-13-01', 'workdir'],
    ['run.date', '11/29/2026', 'pre_run'],
    ['run.time', '07:55:00', 'workdir'],
    ['run.started_at', '2026-11-29T07:55:00Z', 'workdir'],
    ['run.outcome', 'ok', 'post_run'],
    ['run.outcome', 'success; rm -rf /', 'post_run'],
    ['run.datadir', '', 'pre_run'],
    ['budget.remaining_usd', '1.5', 'pre_run'],
    ['budget.remaining_usd', 1.25, 'pre_run'],
    ['budget.remaining_usd', '-0.01', 'pre_run'],
    ['budget.remaining_tokens', -1, 'pre_run'],
  ];
  for (const [name, value, tier] of refused) {
    const result = render(`{{${name}}}`, { ...good, [name]: value }, tier);
    assert.is(result.ok ? 'ok' : result.error.reason, 'bad_identifier', `${name}=${String(value)}`);
  }
  for (const outcome of ['success', 'failed', 'timed_out', 'interrupted']) {
    assert.ok(render('{{run.outcome}}', { ...good, 'run.outcome': outcome }, 'post_run').ok);
  }
  assert.ok(render('{{run.exit_code}}', { ...good, 'run.exit_code': -1 }, 'post_run').ok);
  assert.ok(render('{{run.attempt}}', { ...good, 'run.attempt': '3' }, 'workdir').ok);
});

test('a path value renders as one element whatever it holds', () => {
  const result = renderArgv(['cp', '{{run.datadir}}', '--to={{package.dir}}/out'], { ...good, 'run.datadir': '/a b/$(x) ;c' }, 'pre_run');
  assert.ok(result.ok);
  if (result.ok) assert.equal(result.value, ['cp', '/a b/$(x) ;c', '--to=/srv/repo/out']);
});

test('syntax: whitespace in braces, unterminated, empty and unknown references', () => {
  assert.equal(render('{{run.id}}/{{  task.id\t}}', good, 'workdir'), { ok: true, value: '20261129T075500Z-4f2a/api' });
  assert.equal(render('a { b } c }}', good, 'workdir'), { ok: true, value: 'a { b } c }}' });
  const cases: Array<[string, string, string | undefined]> = [
    ['/srv/{{run.id', 'unterminated', undefined],
    ['{{run.id}}-{{', 'unterminated', undefined],
    ['x{{}}y', 'empty_reference', undefined],
    ['x{{  }}y', 'empty_reference', undefined],
    ['{{run.idd}}', 'unknown_variable', 'run.idd'],
    ['{{run id}}', 'unknown_variable', 'run id'],
    ['{{ run.id | upper }}', 'unknown_variable', 'run.id | upper'],
  ];
  for (const [text, reason, variable] of cases) {
    const result = render(text, good, 'pre_run');
    assert.not.ok(result.ok, text);
    if (!result.ok) {
      assert.is(result.error.reason, reason, text);
      assert.is(result.error.variable, variable, text);
      assert.is(result.error.text, text);
    }
  }
});

test('a value the caller does not have is missing_value, never an empty string', () => {
  const result = render('/srv/{{task.id}}', { 'run.id': 'r' }, 'workdir');
  assert.equal(result.ok ? undefined : [result.error.reason, result.error.variable], ['missing_value', 'task.id']);
  const undef = render('{{model}}', { model: undefined }, 'pre_run');
  assert.is(undef.ok ? 'ok' : undef.error.reason, 'missing_value');
});

test('renderArgv names the failing element', () => {
  const result = renderArgv(['./check', '{{run.outcome}}', '{{event.text}}'], good, 'post_run');
  assert.not.ok(result.ok);
  if (!result.ok) {
    assert.is(result.error.element, 2);
    assert.is(result.error.reason, 'untrusted_variable');
    assert.is(result.error.variable, 'event.text');
  }
  const tier = renderArgv(['./prep', '{{run.outcome}}'], good, 'pre_run');
  assert.equal(tier.ok ? undefined : [tier.error.element, tier.error.reason], [1, 'not_allowed_in_tier']);
});

test('parseTemplate and templateVariables list references once, in order', () => {
  const parsed = parseTemplate('{{run.id}}.{{task.id}}.{{ run.id }}');
  assert.ok(parsed.ok);
  if (parsed.ok) {
    assert.equal(parsed.value.variables, ['run.id', 'task.id']);
    assert.is(parsed.value.parts.length, 5);
  }
  assert.equal(templateVariables('a {{plan.slug}} b {{run.attempt}}'), ['plan.slug', 'run.attempt']);
  assert.equal(templateVariables('{{plan.slug}} {{oops'), ['plan.slug']);
});

test.run();
