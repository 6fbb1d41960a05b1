import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, withTimeout } from '@runplan/test-fixtures';
import { loadPlan } from '../src/plan/load.js';
import { maskSecrets, planCopy, secretValues } from '../src/plan/secrets.js';

test('maskSecrets masks every occurrence, longest first, never re-masking', () => {
  assert.is(maskSecrets('token=abc123 and again abc123.', ['abc123']), 'token=*** and again ***.');
  assert.is(maskSecrets('abcdef', ['abc', 'abcdef']), '***');
  assert.is(maskSecrets('x*y', ['*', 'x']), '******y', 'a mask is not masked again');
  assert.is(maskSecrets('a.b a+b', ['a.b']), '*** a+b', 'regex characters are literal');
  assert.is(maskSecrets('nothing', []), 'nothing');
  assert.is(maskSecrets('nothing', ['']), 'nothing', 'an empty secret masks nothing');
});

test(
  'secret values: env_file values, secret_env from the plan and the environment; plan copy holds none',
  withTimeout(5000, async () => {
    const dir = tempDir('runplan-secrets-');
    try {
      mkdirSync(join(dir.path, 'secrets'));
      writeFileSync(join(dir.path, 'secrets/api.env'), 'API_TOKEN=tok-from-env-file\nEMPTY=\n');
      writeFileSync(
        join(dir.path, 'plan.toml'),
        [
          'slug = "s"',
          'secret_env = ["OPENAI_API_KEY", "DB_PASSWORD"]',
          '[defaults]',
          'command = ["agent", "--key=tok-from-env-file"]',
          '[[tasks]]',
          'id = "a"',
          'prompt = "use pw-in-plan-table carefully"',
          'env_file = "secrets/api.env"',
          'env = { DB_PASSWORD = "pw-in-plan-table", VISIBLE = "plain" }',
        ].join('\n'),
      );
      const loaded = await loadPlan(join(dir.path, 'plan.toml'));
      assert.ok(loaded.ok, JSON.stringify(loaded));
      const plan = loaded.value;
      const env = { OPENAI_API_KEY: 'sk-from-process-env', UNRELATED: 'x' };
      assert.equal(secretValues(plan, env), ['sk-from-process-env', 'tok-from-env-file', 'pw-in-plan-table']);
      const copy = JSON.stringify(planCopy(plan, env));
      for (const secret of ['sk-from-process-env', 'tok-from-env-file', 'pw-in-plan-table']) assert.not.match(copy, secret);
      assert.match(copy, '"VISIBLE":"plain"');
      assert.match(copy, '"DB_PASSWORD":"***"');
      assert.match(copy, '"--key=***"');
      assert.match(copy, '"envFileKeys":["API_TOKEN","EMPTY"]');
      assert.match(copy, 'use *** carefully');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'the plan copy of a plan without secrets is plain JSON: its text is the same as its own round trip, keys sorted, undefined dropped',
  withTimeout(5000, async () => {
    const dir = tempDir('runplan-plancopy-');
    try {
      writeFileSync(
        join(dir.path, 'plan.toml'),
        [
          'slug = "s"',
          '[defaults]',
          'command = ["agent", "{{task.id}}"]',
          '[[tasks]]',
          'id = "a"',
          'env = { zeta = "1", Alpha = "A", _x = "x" }',
          'gates = [["true"], ["test", "-e", "x"]]',
          '[[tasks]]',
          'id = "b"',
          'needs = ["a"]',
        ].join('\n'),
      );
      const loaded = await loadPlan(join(dir.path, 'plan.toml'));
      assert.ok(loaded.ok, JSON.stringify(loaded));
      const copy = planCopy(loaded.value, {});
      const text = JSON.stringify(copy, null, 2);
      assert.is(text, JSON.stringify(JSON.parse(text), null, 2), 'the same text as the JSON round trip');
      assert.match(text, /"Alpha": "A",\s+"_x": "x",\s+"zeta": "1"/);
      assert.not.match(text, 'undefined');
      // Keys sorted at every level, as the digests see them.
      const keys = Object.keys(copy as Record<string, unknown>);
      assert.equal(keys, [...keys].sort());
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
