import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalJson, contractChanges, planDigest, sha256Hex, taskContractDigest, taskContractDigests } from '../src/plan/digest.js';
import type { Plan, TaskSpec } from '../src/plan/load.js';

function task(overrides: Partial<TaskSpec> = {}): TaskSpec {
  return {
    id: 'api',
    needs: ['schema', 'auth'],
    prompt: 'Build the API.',
    command: ['claude', '-p'],
    format: 'claude-stream-json',
    model: 'sonnet',
    gates: [['npm', 'test']],
    deadlineMs: 60_000,
    graceMs: 10_000,
    gateDeadlineMs: 30_000,
    expect: 'commit',
    env: { A: '1' },
    envFile: '/repo/secrets/api.env',
    envFileRef: 'secrets/api.env',
    envFileValues: { TOKEN: 'secret-1' },
    until: ['npm', 'run', 'check'],
    rounds: 8,
    stagnationRounds: 3,
    repair: { task: 3, gate: 3, timeout: 2, provider: 4, integration: 2, backoffMs: 30_000, providerExitCodes: [] },
    ...overrides,
  };
}

function plan(t: TaskSpec, overrides: Partial<Plan> = {}): Plan {
  return {
    file: '/repo/plan.toml',
    dir: '/repo',
    slug: 's',
    base: 'main',
    jobs: 1,
    secretEnv: [],
    hooks: { timeoutMs: 600_000 },
    budget: {},
    repair: t.repair,
    tasks: [t, task({ id: 'schema', needs: [] }), task({ id: 'auth', needs: [] })],
    raw: {},
    ...overrides,
  };
}

test('canonical JSON sorts keys at every level and drops undefined', () => {
  assert.is(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined }], c: 2 } }), '{"a":{"c":2,"d":[3,{"z":1}]},"b":1}');
});

test('keys outside the contract leave the task digest unchanged', () => {
  const base = taskContractDigest(plan(task()), 'api');
  assert.match(base, /^[0-9a-f]{64}$/);
  const outside: Partial<TaskSpec>[] = [
    { deadlineMs: 1 },
    { graceMs: 1 },
    { stallMs: 5 },
    { gateDeadlineMs: 1 },
    { rounds: 2 },
    { stagnationRounds: 9 },
    { blockedExit: 3 },
    { format: 'text' },
    { repair: { task: 9, gate: 9, timeout: 9, provider: 9, integration: 9, backoffMs: 1, providerExitCodes: [75] } },
    { envFileValues: { TOKEN: 'rotated' } },
    { envFile: '/elsewhere/secrets/api.env' },
    { promptFile: '/repo/prompts/api.md' },
    { needs: ['auth', 'schema'] },
  ];
  for (const change of outside) assert.is(taskContractDigest(plan(task(change)), 'api'), base, JSON.stringify(change));
  const planLevel: Partial<Plan>[] = [
    { jobs: 4 },
    { retain: 3 },
    { budget: { maxTokens: 5 } },
    { hooks: { timeoutMs: 1, preRun: ['x'] } },
    { land: 'main' },
    { base: 'dev' },
  ];
  for (const change of planLevel) assert.is(taskContractDigest(plan(task(), change), 'api'), base, JSON.stringify(change));
});

test('every contract key changes the task digest', () => {
  const base = taskContractDigest(plan(task()), 'api');
  const contract: [string, Partial<TaskSpec>][] = [
    ['command', { command: ['claude', '-p', '--verbose'] }],
    ['prompt', { prompt: 'Build the API!' }],
    ['prompt', { prompt: undefined }],
    [
      'gates',
      {
        gates: [
          ['npm', 'test'],
          ['npm', 'run', 'lint'],
        ],
      },
    ],
    ['until', { until: undefined }],
    ['env', { env: { A: '2' } }],
    ['env', { env: { A: '1', B: '1' } }],
    ['envFile', { envFileRef: 'secrets/other.env' }],
    ['expect', { expect: 'none' }],
    ['model', { model: 'opus' }],
    ['needs', { needs: ['schema'] }],
  ];
  for (const [key, change] of contract) {
    const changed = task(change);
    assert.is.not(taskContractDigest(plan(changed), 'api'), base, key);
    assert.equal(contractChanges(task(), changed), [key]);
  }
});

test('the plan digest covers every key but env_file values and absolute locations', () => {
  const p = plan(task());
  const base = planDigest(p);
  assert.is(planDigest(plan(task({ envFileValues: { TOKEN: 'rotated' } }))), base);
  assert.is(planDigest({ ...p, file: '/moved/plan.toml', dir: '/moved', raw: { anything: 1 } }), base);
  assert.is(planDigest(plan(task({ envFile: '/moved/secrets/api.env', promptFile: '/moved/p.md' }))), base);
  for (const change of [{ jobs: 2 }, { budget: { maxCostUsd: 1 } }, { retain: 1 }, { slug: 't' }])
    assert.is.not(planDigest(plan(task(), change)), base, JSON.stringify(change));
  assert.is.not(planDigest(plan(task({ deadlineMs: 5 }))), base);
});

test('an unknown task id is a caller bug', () => {
  assert.throws(() => taskContractDigest(plan(task()), 'nope'), /no task "nope"/);
});

test('task contract digests: one per task, the same as asking task by task', () => {
  const tasks = ['a', 'b', 'c'].map((id, i) => task({ id, needs: i === 0 ? [] : ['a'], prompt: `do ${id}` }));
  const p = { tasks };
  const digests = taskContractDigests(p);
  assert.equal([...digests.keys()], ['a', 'b', 'c']);
  for (const t of tasks) assert.is(digests.get(t.id), taskContractDigest(p, t.id));
});

test('sha256Hex hashes the UTF-8 bytes of its text', () => {
  assert.is(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.is(sha256Hex('é'), createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'));
});

test.run();
