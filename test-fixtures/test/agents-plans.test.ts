// The fixture plans are what the coordinator's tests stand on: these tests check that
// each is what its comment says (shape, DAG, directives that mock-agent understands) and
// run the 13-task plan's prompts through the real mock agent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { agentsPath, envWithAgents, gitRepo, plansPath, readLedger, runBin, tempDir, withTimeout } from '../src/index.js';

interface RawTask {
  id: string;
  needs?: string[];
  prompt?: string;
  prompt_file?: string;
  env_file?: string;
  command?: string[];
  gates?: string[][];
  until?: string[];
}
interface RawPlan {
  slug: string;
  base?: string;
  defaults?: { command?: string[]; format?: string };
  tasks: RawTask[];
}

const planNames = readdirSync(plansPath())
  .filter((name) => name.endsWith('.toml'))
  .map((name) => name.slice(0, -'.toml'.length))
  .sort();

function load(name: string): RawPlan {
  return parse(readFileSync(join(plansPath(), `${name}.toml`), 'utf8')) as unknown as RawPlan;
}

function promptOf(task: RawTask): string {
  if (task.prompt !== undefined) return task.prompt;
  if (task.prompt_file !== undefined && existsSync(join(plansPath(), task.prompt_file)))
    return readFileSync(join(plansPath(), task.prompt_file), 'utf8');
  return '';
}

const DIRECTIVES = new Set([
  'write',
  'put',
  'rm',
  'commit',
  'sleep',
  'exit',
  'fail-first',
  'ignore-term',
  'grandchild',
  'format',
  'model',
  'session',
  'usage',
  'model-usage',
  'turn',
  'say',
  'result',
  'raw',
  'stderr',
  'no-result',
  'is-error',
  'rate-limit',
  'blocked',
  'env-to',
  'print-env',
  'until-file',
  'on-attempt',
  'until-attempt',
  'from-attempt',
  'close-stdin',
]);

function directivesOf(prompt: string): string[][] {
  return prompt
    .split('\n')
    .filter((line) => line.startsWith('mock:'))
    .map((line) => line.slice('mock:'.length).trim().split(/\s+/));
}

// Ids of every task `id` depends on, directly or not.
function ancestors(plan: RawPlan, id: string, seen = new Set<string>()): Set<string> {
  for (const need of plan.tasks.find((t) => t.id === id)?.needs ?? []) {
    if (seen.has(need)) continue;
    seen.add(need);
    ancestors(plan, need, seen);
  }
  return seen;
}

test('every fixture plan parses, names its slug after its file, starts from main and runs mock agents', () => {
  assert.ok(planNames.length >= 20, `only ${planNames.length} plans`);
  for (const name of planNames) {
    const plan = load(name);
    assert.is(plan.slug, name, `${name}: slug`);
    assert.is(plan.base, 'main', `${name}: base`);
    assert.equal(plan.defaults?.command, ['mock-agent', '{{task.id}}', '{{run.attempt}}'], `${name}: defaults.command`);
    assert.is(plan.defaults?.format, 'claude-stream-json', `${name}: defaults.format`);
    for (const task of plan.tasks) {
      const argv0 = (task.command ?? plan.defaults!.command!)[0]!;
      assert.ok(existsSync(join(agentsPath(), argv0)), `${name}/${task.id}: ${argv0} is a mock agent`);
      for (const argv of [...(task.gates ?? []), ...(task.until ? [task.until] : [])]) {
        assert.ok(existsSync(join(agentsPath(), argv[0]!)), `${name}/${task.id}: ${argv[0]} is a mock script`);
      }
      for (const words of directivesOf(promptOf(task))) {
        let at = 0;
        while (['on-attempt', 'until-attempt', 'from-attempt'].includes(words[at]!)) at += 2;
        assert.ok(DIRECTIVES.has(words[at]!), `${name}/${task.id}: unknown directive ${words.join(' ')}`);
      }
    }
  }
});

test('every valid fixture plan has unique ids, known needs, no cycle, and the files it names', () => {
  for (const name of planNames.filter((n) => n !== 'invalid')) {
    const plan = load(name);
    const ids = plan.tasks.map((t) => t.id);
    assert.is(new Set(ids).size, ids.length, `${name}: duplicate ids`);
    for (const task of plan.tasks) {
      for (const need of task.needs ?? []) assert.ok(ids.includes(need), `${name}/${task.id}: unknown need ${need}`);
      assert.not.ok(ancestors(plan, task.id).has(task.id), `${name}/${task.id}: cycle`);
      if (task.prompt_file !== undefined && name !== 'close-stdin')
        assert.ok(existsSync(join(plansPath(), task.prompt_file)), `${name}: ${task.prompt_file}`);
      if (task.env_file !== undefined) assert.ok(existsSync(join(plansPath(), task.env_file)), `${name}: ${task.env_file}`);
    }
  }
});

test('invalid.toml holds every kind of problem the validator must list', () => {
  const plan = load('invalid') as RawPlan & Record<string, unknown>;
  const text = readFileSync(join(plansPath(), 'invalid.toml'), 'utf8');
  assert.ok('bogus_key' in plan);
  assert.is(plan.tasks.filter((t) => t.id === 'a').length, 2, 'duplicate id');
  assert.ok(
    plan.tasks.some((t) => t.needs?.includes('missing')),
    'missing need',
  );
  assert.ok(ancestors(plan, 'c1').has('c1'), 'cycle');
  assert.match(text, /deadline = "soon"/);
  assert.match(text, /\{\{no\.such\.var\}\}/);
  assert.match(text, /prompt = "x"\nprompt_file =/);
});

test('thirteen: 13 tasks, t01–t06 exactly before t07, a gate, both commit styles, a prompt_file', () => {
  const plan = load('thirteen');
  const ids = plan.tasks.map((t) => t.id);
  assert.equal(
    ids,
    Array.from({ length: 13 }, (_, i) => `t${String(i + 1).padStart(2, '0')}`),
  );
  assert.equal([...ancestors(plan, 't07')].sort(), ['t01', 't02', 't03', 't04', 't05', 't06']);
  for (const [i, task] of plan.tasks.entries()) {
    for (const need of task.needs ?? []) assert.ok(ids.indexOf(need) < i, `${task.id} needs ${need} declared later`);
  }
  assert.is(plan.tasks.filter((t) => (t.gates ?? []).length > 0).length, 1);
  const commits = plan.tasks.filter((t) => directivesOf(promptOf(t)).some((d) => d[0] === 'commit')).length;
  assert.ok(commits > 0 && commits < 13, `${commits} tasks commit themselves`);
  assert.ok(plan.tasks.some((t) => t.prompt_file !== undefined));
  const roots = plan.tasks.filter((t) => (t.needs ?? []).length === 0).length;
  const fanIn = plan.tasks.filter((t) => (t.needs ?? []).length > 1).length;
  assert.ok(roots >= 2 && fanIn >= 2, 'parallel roots and fan-in');
});

test('no two tasks that may run at once write the same file (every plan but conflict)', () => {
  for (const name of planNames.filter((n) => n !== 'conflict' && n !== 'invalid')) {
    const plan = load(name);
    const writes = new Map(
      plan.tasks.map((t) => [
        t.id,
        new Set(
          directivesOf(promptOf(t))
            .filter((d) => ['write', 'put', 'until-file'].includes(d[0]!))
            .map((d) => d[1]!),
        ),
      ]),
    );
    for (const a of plan.tasks) {
      for (const b of plan.tasks) {
        if (a.id >= b.id || ancestors(plan, a.id).has(b.id) || ancestors(plan, b.id).has(a.id)) continue;
        const shared = [...writes.get(a.id)!].filter((f) => writes.get(b.id)!.has(f));
        assert.equal(shared, [], `${name}: ${a.id} and ${b.id} may run at once and both write ${shared.join(', ')}`);
      }
    }
  }
  const conflict = load('conflict');
  const [left, right] = conflict.tasks.map((t) => directivesOf(promptOf(t)).find((d) => d[0] === 'put')![1]);
  assert.is(left, 'README.md');
  assert.is(right, 'README.md');
});

test(
  'thirteen through the real mock agent, in dependency order: every file and the chain in order',
  withTimeout(300_000, async () => {
    const repo = gitRepo();
    const dir = tempDir();
    try {
      const plan = load('thirteen');
      const ledger = join(dir.path, 'ledger');
      for (const task of plan.tasks) {
        const r = await runBin(join(agentsPath(), 'mock-agent'), [task.id, '1'], {
          cwd: repo.path,
          env: envWithAgents({ MOCK_LEDGER: ledger }),
          input: promptOf(task),
        });
        assert.is(r.exitCode, 0, `${task.id}: ${r.stderr}`);
        for (const gate of task.gates ?? []) {
          const g = await runBin(join(agentsPath(), gate[0]!), gate.slice(1), { cwd: repo.path, env: envWithAgents() });
          assert.is(g.exitCode, 0, `${task.id} gate: ${g.stdout}`);
        }
        repo.git(['add', '-A']);
        if (repo.git(['status', '--porcelain']) !== '') repo.git(['commit', '-q', '-m', `runplan: ${task.id}`]);
      }
      for (const task of plan.tasks) assert.ok(repo.fileAt('HEAD', `out/${task.id}.txt`), `out/${task.id}.txt`);
      assert.is(repo.fileAt('HEAD', 'notes/chain.txt'), 't07\nt08\nt11\nt13\n');
      assert.equal(
        readLedger(ledger).map((e) => e.task),
        plan.tasks.map((t) => t.id),
      );
      assert.is(repo.git(['rev-list', '--count', 'HEAD']), '14');
    } finally {
      repo.cleanup();
      dir.cleanup();
    }
  }),
);

// Exit code of each small plan's first attempt when its prompt runs on its own (plans whose
// first attempt hangs on purpose, or that need a file the test writes, are left out).
const FIRST_ATTEMPT: Record<string, number> = {
  single: 0,
  conflict: 0,
  'gate-fail': 0,
  loop: 0,
  'loop-slow': 0,
  stagnate: 0,
  'zero-diff': 0,
  'fail-once': 1,
  'repeat-fail': 1,
  'repeat-fail-noisy': 1,
  'different-fail': 1,
  blocked: 0,
  'blocked-exit': 42,
  'rate-limit': 1,
  'is-error': 0,
  budget: 0,
  usage: 0,
  land: 0,
  'pre-run-fail': 0,
  'post-run-fail': 0,
  env: 0,
  'parallel-rebase': 0,
};

test(
  "the small plans' prompts run through mock-agent with the exit codes their comments promise",
  withTimeout(300_000, async () => {
    // One repo for all: only exit codes are compared, and creating repos is not free.
    const repo = gitRepo();
    try {
      for (const [name, expected] of Object.entries(FIRST_ATTEMPT)) {
        const codes: (number | null)[] = [];
        for (const task of load(name).tasks) {
          const r = await runBin(join(agentsPath(), (task.command ?? ['mock-agent'])[0]!), [task.id, '1'], {
            cwd: repo.path,
            env: envWithAgents(),
            input: promptOf(task),
          });
          assert.ok(r.exitCode !== 2, `${name}/${task.id}: ${r.stderr}`);
          codes.push(r.exitCode);
        }
        assert.is(codes[0], expected, `${name}: first task's exit code`);
      }
    } finally {
      repo.cleanup();
    }
  }),
);

test.run();
