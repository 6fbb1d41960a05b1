import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  canonicalJson,
  contractChanges,
  planDigest,
  sha256Hex,
  sortKeys,
  taskContractDigest,
  taskContractDigests,
} from '../src/plan/digest.js';
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

// sortKeys as it was before it returned canonical parts as they are: a copy at every level.
function copiedSort(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : copiedSort(v)));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = copiedSort(v);
    }
    return out;
  }
  return value;
}

class WithToJson {
  b = 2;
  a = 1;
  toJSON(): string {
    return 'not what a digest sees';
  }
}
class SortedWithToJson {
  a = 1;
  toJSON(): string {
    return 'not what a digest sees';
  }
}

test("canonicalJson gives the copying sort's text for every shape, and sortKeys returns canonical parts as they are", () => {
  const argv = ['claude', '-p', '{{task.id}}'];
  const sorted = { a: 1, b: [argv, []], c: { d: null, e: 'x' } };
  const values: unknown[] = [
    sorted,
    { b: 1, a: 2 },
    { a: 1, b: undefined, c: 3 },
    { a: undefined },
    [1, undefined, 'x', [undefined]],
    { '10': 'ten', '9': 'nine', a: 'a', '01': 'zero-one' },
    { '9': 'nine', b: { '10': 1, '2': 2 } },
    new WithToJson(),
    new SortedWithToJson(),
    { nested: new SortedWithToJson() },
    { at: new Date(0), list: [new Date(1)] },
    Object.assign(Object.create(null) as object, { b: 1, a: 2 }),
    Object.assign(Object.create(null) as object, { a: 1, b: 2 }),
    { fn: () => 1, a: 1 },
    task(),
    [task(), task({ id: 'web', needs: [] })],
  ];
  for (const v of values) assert.is(canonicalJson(v), JSON.stringify(copiedSort(v)), JSON.stringify(copiedSort(v)));
  assert.ok(sortKeys(sorted) === sorted, 'an object already canonical is not copied');
  assert.ok(sortKeys(argv) === argv, 'an argv of strings is not copied');
  assert.ok(
    sortKeys(new SortedWithToJson()) instanceof SortedWithToJson === false,
    'a class instance is copied (its toJSON is not the digest)',
  );
});

test.run();
