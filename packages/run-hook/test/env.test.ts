import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hookEnv } from '../src/env.js';

const vars = {
  'harness.name': 'nightly',
  'harness.workdir': '/work/tree',
  'run.datadir': '/work/tree/.harness-run/r1',
  'run.id': 'r1',
  'run.attempt': 2,
  'task.id': 't-7',
  'plan.slug': 'nightly',
  'run.outcome': 'success',
  'run.exit_code': 0,
};

test('every inherited HARNESS_* is removed, whatever it holds', () => {
  const env = hookEnv(
    { PATH: '/bin', HOME: '/h', HARNESS_RUN_OUTCOME: 'success', HARNESS_RUN_ID: 'stale', HARNESS_ANYTHING: 'x', harness_lower: 'kept' },
    {},
    'post_run',
  );
  assert.equal(env, { PATH: '/bin', HOME: '/h', harness_lower: 'kept' });
});

test('post_run sets every hook variable from the vars', () => {
  const env = hookEnv({ PATH: '/bin', HARNESS_RUN_ID: 'stale' }, vars, 'post_run');
  assert.equal(env, {
    PATH: '/bin',
    HARNESS_NAME: 'nightly',
    HARNESS_WORKDIR: '/work/tree',
    HARNESS_RUN_DATADIR: '/work/tree/.harness-run/r1',
    HARNESS_RUN_ID: 'r1',
    HARNESS_RUN_ATTEMPT: '2',
    HARNESS_TASK_ID: 't-7',
    HARNESS_PLAN_SLUG: 'nightly',
    HARNESS_RUN_OUTCOME: 'success',
    HARNESS_RUN_EXIT_CODE: '0',
  });
});

test('pre_run never sets the outcome variables, even when the vars hold them', () => {
  const env = hookEnv({ HARNESS_RUN_OUTCOME: 'success', HARNESS_RUN_EXIT_CODE: '0' }, vars, 'pre_run');
  assert.is(env.HARNESS_RUN_OUTCOME, undefined);
  assert.is(env.HARNESS_RUN_EXIT_CODE, undefined);
  assert.is(env.HARNESS_RUN_ID, 'r1');
});

test('a hook variable is set only when its template variable is given', () => {
  const env = hookEnv({ HARNESS_TASK_ID: 'stale' }, { 'run.id': 'r9' }, 'post_run');
  assert.equal(env, { HARNESS_RUN_ID: 'r9' });
});

test('the base environment is not modified', () => {
  const base = { HARNESS_RUN_ID: 'stale', PATH: '/bin' };
  hookEnv(base, vars, 'post_run');
  assert.equal(base, { HARNESS_RUN_ID: 'stale', PATH: '/bin' });
});

test.run();
