import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { flattenVars, parseAssignment } from '../src/vars.js';

test('an assignment splits at the first =', () => {
  assert.equal(parseAssignment('run.id=a=b'), { ok: true, value: ['run.id', 'a=b'] });
  assert.equal(parseAssignment('harness.workdir='), { ok: true, value: ['harness.workdir', ''] });
});

test('an assignment without a dotted name is refused, naming it', () => {
  for (const text of ['noequals', '=value', 'run..id=x', '.run=x', 'run id=x']) {
    const parsed = parseAssignment(text);
    assert.is(parsed.ok, false, text);
    if (!parsed.ok) {
      assert.is(parsed.error.reason, 'bad_assignment');
      assert.match(parsed.error.message, JSON.stringify(text));
    }
  }
});

test('a vars document may be flat, nested, or both', () => {
  assert.equal(flattenVars({ 'run.id': 'r1', run: { attempt: 2 }, harness: { name: 'n', workdir: '/w' } }, 'f'), {
    ok: true,
    value: { 'run.id': 'r1', 'run.attempt': 2, 'harness.name': 'n', 'harness.workdir': '/w' },
  });
});

test('a vars document is refused naming the key that is wrong', () => {
  const cases: [unknown, string][] = [
    [[], 'f is not a JSON object'],
    ['x', 'f is not a JSON object'],
    [null, 'f is not a JSON object'],
    [{ run: { id: ['x'] } }, 'f: run.id is an array'],
    [{ run: { id: null } }, 'f: run.id is null'],
    [{ 'run.ok': true }, 'f: run.ok is a boolean'],
    [{ 'run.id': 'a', run: { id: 'b' } }, 'f: run.id is given twice'],
  ];
  for (const [document, message] of cases) {
    const flat = flattenVars(document, 'f');
    assert.is(flat.ok, false, message);
    if (!flat.ok) assert.match(flat.error.message, message);
  }
});

test.run();
