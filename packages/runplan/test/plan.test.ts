import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { plansPath, tempDir, withTimeout } from '@runplan/test-fixtures';
import { loadPlan, topologicalOrder } from '../src/plan/load.js';
import type { Plan, PlanProblem } from '../src/plan/load.js';
import { parseEnvFile } from '../src/plan/env-file.js';
import { refComponentProblem } from '../src/plan/refs.js';

// Writes files into a fresh temp dir, loads `plan.toml` (or `name`), cleans up.
async function load(files: Record<string, string>, name = 'plan.toml'): Promise<{ plan?: Plan; problems: PlanProblem[]; dir: string }> {
  const dir = tempDir('runplan-plan-');
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir.path, path, '..'), { recursive: true });
      writeFileSync(join(dir.path, path), text);
    }
    const result = await loadPlan(join(dir.path, name));
    return result.ok ? { plan: result.value, problems: [], dir: dir.path } : { problems: result.error, dir: dir.path };
  } finally {
    dir.cleanup();
  }
}

const has = (problems: PlanProblem[], path: string, reason: string): boolean =>
  problems.some((p) => p.path === path && p.reason === reason);
const show = (problems: PlanProblem[]): string => problems.map((p) => `${p.path} ${p.reason}: ${p.message}`).join('\n');

const designExample = `
slug = "auth-refactor"
base = "main"
jobs = 2
retain = 20
land = "main"
workdir = "/srv/runs/{{plan.slug}}/{{run.id}}.{{task.id}}.{{run.attempt}}"
secret_env = ["OPENAI_API_KEY"]

[hooks]
pre_run = ["./scripts/prepare", "{{run.datadir}}"]
post_run = ["./scripts/check", "{{run.outcome}}", "{{run.exit_code}}"]
timeout = "10m"

[defaults]
command = ["claude", "-p", "--output-format", "stream-json", "--verbose"]
format = "claude-stream-json"
deadline = "45m"
stall = "10m"
grace = "15s"
env = { SHARED = "1", OVERRIDE = "default" }

[budget]
max_tokens = 5_000_000
max_cost_usd = 40.0

[repair]
task = 3
gate = 3
timeout = 2
provider = 4
integration = 2
backoff = "30s"
provider_exit_codes = [75]

[[tasks]]
id = "schema"
prompt = "Add the users table migration."
gates = [["npm", "test"]]

[[tasks]]
id = "api"
needs = ["schema"]
prompt_file = "prompts/api.md"
env_file = "secrets/api.env"
env = { OVERRIDE = "task" }
until = ["npm", "run", "check:api"]
rounds = 8
repair = { task = 5 }
`;

test(
  'the DESIGN.md example loads with defaults applied',
  withTimeout(5000, async () => {
    const { plan, problems, dir } = await load({
      'plan.toml': designExample,
      'prompts/api.md': 'Build the API.\n',
      'secrets/api.env': '# api secrets\nAPI_TOKEN=s3cr3t-value\n\nexport OTHER="quoted value"\n',
    });
    assert.equal(problems, [], show(problems));
    assert.ok(plan);
    assert.is(plan.slug, 'auth-refactor');
    assert.is(plan.base, 'main');
    assert.is(plan.jobs, 2);
    assert.is(plan.retain, 20);
    assert.is(plan.land, 'main');
    assert.equal(plan.secretEnv, ['OPENAI_API_KEY']);
    assert.equal(plan.hooks, {
      preRun: ['./scripts/prepare', '{{run.datadir}}'],
      postRun: ['./scripts/check', '{{run.outcome}}', '{{run.exit_code}}'],
      timeoutMs: 600_000,
    });
    assert.equal(plan.budget, { maxTokens: 5_000_000, maxCostUsd: 40 });
    assert.equal(plan.repair, { task: 3, gate: 3, timeout: 2, provider: 4, integration: 2, backoffMs: 30_000, providerExitCodes: [75] });
    assert.equal(
      plan.tasks.map((t) => t.id),
      ['schema', 'api'],
    );
    const [schema, api] = plan.tasks as [Plan['tasks'][0], Plan['tasks'][0]];
    assert.equal(schema.command, ['claude', '-p', '--output-format', 'stream-json', '--verbose']);
    assert.is(schema.format, 'claude-stream-json');
    assert.is(schema.deadlineMs, 45 * 60_000);
    assert.is(schema.stallMs, 600_000);
    assert.is(schema.graceMs, 15_000);
    assert.is(schema.gateDeadlineMs, 30 * 60_000);
    assert.is(schema.expect, 'commit');
    assert.is(schema.rounds, 25);
    assert.equal(schema.gates, [['npm', 'test']]);
    assert.is(schema.prompt, 'Add the users table migration.');
    assert.equal(schema.env, { SHARED: '1', OVERRIDE: 'default' });
    assert.equal(schema.envFileValues, {});
    assert.is(api.prompt, 'Build the API.\n');
    assert.is(api.promptFile, join(dir, 'prompts/api.md'));
    assert.is(api.envFile, join(dir, 'secrets/api.env'));
    assert.is(api.envFileRef, 'secrets/api.env');
    assert.equal(api.envFileValues, { API_TOKEN: 's3cr3t-value', OTHER: 'quoted value' });
    assert.equal(api.env, { SHARED: '1', OVERRIDE: 'task' });
    assert.equal(api.until, ['npm', 'run', 'check:api']);
    assert.is(api.rounds, 8);
    assert.is(api.repair.task, 5);
    assert.is(api.repair.gate, 3);
    assert.equal(api.repair.providerExitCodes, [75]);
    assert.equal(api.needs, ['schema']);
  }),
);

test(
  'built-in defaults for a minimal plan',
  withTimeout(5000, async () => {
    const { plan, problems } = await load({ 'plan.toml': 'slug = "s"\n[[tasks]]\nid = "a"\ncommand = ["agent"]\n' });
    assert.equal(problems, [], show(problems));
    assert.ok(plan);
    assert.is(plan.base, 'HEAD');
    assert.is(plan.jobs, 1);
    assert.is(plan.hooks.timeoutMs, 600_000);
    assert.equal(plan.repair, { task: 3, gate: 3, timeout: 2, provider: 4, integration: 2, backoffMs: 30_000, providerExitCodes: [] });
    const task = plan.tasks[0]!;
    assert.is(task.format, 'text');
    assert.is(task.deadlineMs, 3_600_000);
    assert.is(task.graceMs, 10_000);
    assert.is(task.stallMs, undefined);
    assert.is(task.gateDeadlineMs, 1_800_000);
    assert.is(task.expect, 'commit');
    assert.is(task.rounds, 25);
    assert.is(task.prompt, undefined);
    assert.equal(task.gates, []);
  }),
);

test(
  'JSON plans by extension and by content',
  withTimeout(5000, async () => {
    const json = JSON.stringify({ slug: 'j', tasks: [{ id: 'a', command: ['x'] }] });
    const byName = await load({ 'plan.json': json }, 'plan.json');
    assert.is(byName.plan?.slug, 'j');
    const byContent = await load({ 'plan.txt': `  ${json}` }, 'plan.txt');
    assert.is(byContent.plan?.slug, 'j');
    const broken = await load({ 'plan.json': '{"slug": ' }, 'plan.json');
    assert.ok(has(broken.problems, '', 'parse_error'), show(broken.problems));
  }),
);

test(
  'a TOML syntax error is one problem naming the line',
  withTimeout(5000, async () => {
    const { problems } = await load({ 'plan.toml': 'slug = "a"\njobs = = 2\n' });
    assert.is(problems.length, 1);
    assert.is(problems[0]!.reason, 'parse_error');
    assert.match(problems[0]!.message, 'line 2');
  }),
);

test(
  'a missing plan file',
  withTimeout(5000, async () => {
    const { problems } = await load({}, 'nope.toml');
    assert.is(problems[0]!.reason, 'missing_file');
  }),
);

test(
  'every problem of a bad plan is listed at once, each at its key path',
  withTimeout(5000, async () => {
    const { problems } = await load({
      'plan.toml': `
slug = "bad..slug"
jobs = 0
retain = -1
colour = "blue"
land = "-f"
base = "--upload-pack=evil"
workdir = "/runs/{{harness.workdir}}/{{run.id}}"

[hooks]
pre_run = ["prep", "{{run.outcome}}"]
post_run = ["check", "{{run.outcome}}"]
timeout = "ten minutes"
retry = 2

[defaults]
deadline = "45"
stall = "0s"
prompt = "not a default key"

[budget]
max_tokens = 1000
max_cost_usd = 2.5
max_hours = 3

[repair]
task = -1
gate = "3"
backof = "10s"
provider_exit_codes = [75, 300]

[[tasks]]
id = "a"
command = ["agent", "{{event.path}}"]
needs = ["ghost", "c"]
format = "codex-json"
expect = "maybe"
prompt = "x"
prompt_file = "p.md"

[[tasks]]
id = "a"
command = ["agent"]

[[tasks]]
id = "has space"
command = ["agent"]

[[tasks]]
id = "b"
needs = ["c"]
command = ["agent", "{{run.outcome}}"]
gates = [["npm", "test"], []]
prompt_file = "missing.md"
env_file = "secrets.env"
grace = "soon"
gate_deadline = "1d"
rounds = 3
blocked_exit = 0
repair = { task = 2, bogus = 1 }
env = { "BAD-NAME" = "x", OK = 3 }

[[tasks]]
id = "c"
needs = ["b", "b"]
until = ["verify", "{{run.exit_code}}"]

[[tasks]]
id = "d"
command = ["agent", "{{model}}"]
`,
      'secrets.env': 'GOOD=1\nthis line holds hunter2 but no equals\n',
    });
    const expected: [string, string][] = [
      ['slug', 'bad_ref'],
      ['jobs', 'out_of_range'],
      ['retain', 'out_of_range'],
      ['colour', 'unknown_key'],
      ['land', 'bad_ref'],
      ['base', 'bad_ref'],
      ['workdir', 'not_allowed_in_tier'],
      ['hooks.pre_run[1]', 'not_allowed_in_tier'],
      ['hooks.timeout', 'bad_duration'],
      ['hooks.retry', 'unknown_key'],
      ['defaults.deadline', 'bad_duration'],
      ['defaults.stall', 'bad_duration'],
      ['defaults.prompt', 'unknown_key'],
      ['budget.max_hours', 'unknown_key'],
      ['repair.task', 'out_of_range'],
      ['repair.gate', 'wrong_type'],
      ['repair.backof', 'unknown_key'],
      ['repair.provider_exit_codes[1]', 'out_of_range'],
      ['tasks[0].command[1]', 'untrusted_variable'],
      ['tasks[0].needs[0]', 'unknown_need'],
      ['tasks[0].expect', 'bad_value'],
      ['tasks[0].prompt_file', 'prompt_conflict'],
      ['tasks[1].id', 'duplicate_id'],
      ['tasks[2].id', 'bad_identifier'],
      ['tasks[3].command[1]', 'not_allowed_in_tier'],
      ['tasks[3].gates[1]', 'empty_argv'],
      ['tasks[3].prompt_file', 'missing_file'],
      ['tasks[3].env_file', 'bad_env_file'],
      ['tasks[3].grace', 'bad_duration'],
      ['tasks[3].gate_deadline', 'bad_duration'],
      ['tasks[3].rounds', 'rounds_without_until'],
      ['tasks[3].blocked_exit', 'out_of_range'],
      ['tasks[3].repair.bogus', 'unknown_key'],
      ['tasks[3].env.BAD-NAME', 'bad_env_name'],
      ['tasks[3].env.OK', 'wrong_type'],
      ['tasks[4].needs[1]', 'duplicate_need'],
      ['tasks[3].needs', 'cycle'],
      ['tasks[4].until[1]', 'not_allowed_in_tier'],
      ['tasks[4].command', 'missing_key'],
      ['tasks[5].command[1]', 'missing_value'],
      ['budget.max_tokens', 'budget_unreportable'],
      ['budget.max_cost_usd', 'budget_unreportable'],
    ];
    for (const [path, reason] of expected) assert.ok(has(problems, path, reason), `missing ${path} ${reason} in:\n${show(problems)}`);
    assert.not.ok(has(problems, 'hooks.post_run[1]', 'not_allowed_in_tier'), 'run.outcome is fine in post_run');
    const cycle = problems.find((p) => p.reason === 'cycle')!;
    assert.match(cycle.message, 'b → c → b');
    const envFile = problems.find((p) => p.path === 'tasks[3].env_file')!;
    assert.match(envFile.message, 'line 2');
    assert.not.match(envFile.message, 'hunter2', 'the content of an env_file line is never echoed');
    assert.match(problems.find((p) => p.path === 'repair.backof')!.message, 'did you mean "backoff"');
    // text tasks report neither tokens nor cost; codex reports no cost: one problem per task and key.
    assert.is(problems.filter((p) => p.reason === 'budget_unreportable' && p.path === 'budget.max_tokens').length, 5);
    assert.is(problems.filter((p) => p.reason === 'budget_unreportable' && p.path === 'budget.max_cost_usd').length, 6);
  }),
);

test(
  'a slug git would refuse, and a slug that is not an identifier',
  withTimeout(5000, async () => {
    for (const slug of ['x.lock', 'a..b', 'trailing.']) {
      const { problems } = await load({ 'plan.toml': `slug = "${slug}"\n[[tasks]]\nid = "a"\ncommand = ["x"]\n` });
      assert.ok(has(problems, 'slug', 'bad_ref'), `${slug}: ${show(problems)}`);
    }
    for (const slug of ['-x', '.x', 'a/b', 'a b', 'a@{b', 'a~b', '']) {
      const { problems } = await load({ 'plan.toml': `slug = "${slug}"\n[[tasks]]\nid = "a"\ncommand = ["x"]\n` });
      assert.ok(has(problems, 'slug', 'bad_identifier'), `${slug}: ${show(problems)}`);
    }
    const { problems } = await load({ 'plan.toml': '[[tasks]]\nid = "a"\ncommand = ["x"]\n' });
    assert.ok(has(problems, 'slug', 'missing_key'));
  }),
);

test('git ref component rules', () => {
  for (const bad of ['', '.a', '-a', 'a.lock', 'a.', 'a..b', 'a@{b', '@', 'a b', 'a~', 'a^', 'a:b', 'a?', 'a*', 'a[', 'a\\b', 'a\x01']) {
    assert.ok(refComponentProblem(bad), JSON.stringify(bad));
  }
  for (const good of ['a', 'a.b', 'a-b_c', 'v1.2', 'a@b']) assert.is(refComponentProblem(good), undefined, good);
});

test(
  'workdir must give every attempt its own directory',
  withTimeout(5000, async () => {
    const { problems } = await load({
      'plan.toml': 'slug = "s"\nworkdir = "/runs/{{plan.slug}}/{{run.id}}"\n[[tasks]]\nid = "a"\ncommand = ["x"]\n',
    });
    assert.ok(has(problems, 'workdir', 'workdir_not_unique'), show(problems));
    assert.match(problems[0]!.message, '{{task.id}}');
    const relative = await load({
      'plan.toml': 'slug = "s"\nworkdir = "runs/{{run.id}}.{{task.id}}.{{run.attempt}}"\n[[tasks]]\nid = "a"\ncommand = ["x"]\n',
    });
    assert.ok(has(relative.problems, 'workdir', 'not_absolute'), show(relative.problems));
  }),
);

test(
  'a cycle is named; a task needing itself is a cycle',
  withTimeout(5000, async () => {
    const { problems } = await load({
      'plan.toml':
        'slug = "s"\n[defaults]\ncommand = ["x"]\n[[tasks]]\nid = "a"\nneeds = ["c"]\n[[tasks]]\nid = "b"\nneeds = ["a"]\n[[tasks]]\nid = "c"\nneeds = ["b"]\n[[tasks]]\nid = "d"\nneeds = ["d"]\n',
    });
    const cycles = problems.filter((p) => p.reason === 'cycle');
    assert.is(cycles.length, 2, show(problems));
    assert.is(cycles[0]!.path, 'tasks[0].needs');
    assert.match(cycles[0]!.message, 'a → c → b → a');
    assert.is(cycles[1]!.path, 'tasks[3].needs');
    assert.match(cycles[1]!.message, 'd → d');
  }),
);

test(
  'stall "off" at task level overrides a default stall; model fills {{model}}',
  withTimeout(5000, async () => {
    const { plan, problems } = await load({
      'plan.toml':
        'slug = "s"\n[defaults]\ncommand = ["agent", "--model", "{{model}}"]\nmodel = "claude-sonnet-4-5"\nstall = "5m"\n[[tasks]]\nid = "a"\nstall = "off"\n[[tasks]]\nid = "b"\nmodel = "gpt-5"\n',
    });
    assert.equal(problems, [], show(problems));
    assert.is(plan!.tasks[0]!.stallMs, undefined);
    assert.is(plan!.tasks[0]!.model, 'claude-sonnet-4-5');
    assert.is(plan!.tasks[1]!.stallMs, 300_000);
    assert.is(plan!.tasks[1]!.model, 'gpt-5');
    const bad = await load({ 'plan.toml': 'slug = "s"\n[[tasks]]\nid = "a"\ncommand = ["x"]\nmodel = "anthropic/claude"\n' });
    assert.ok(has(bad.problems, 'tasks[0].model', 'bad_identifier'));
  }),
);

test(
  'budget a format can report is accepted',
  withTimeout(5000, async () => {
    const { problems } = await load({
      'plan.toml':
        'slug = "s"\n[budget]\nmax_tokens = 10\n[defaults]\ncommand = ["x"]\nformat = "codex-json"\n[[tasks]]\nid = "a"\n[[tasks]]\nid = "b"\nformat = "claude-stream-json"\n',
    });
    assert.equal(problems, [], show(problems));
  }),
);

test(
  'topologicalOrder is dependency order, file order among ready tasks',
  withTimeout(5000, async () => {
    const { plan, problems } = await load({
      'plan.toml':
        'slug = "s"\n[defaults]\ncommand = ["x"]\n' +
        ['e:d', 'a:', 'd:a,b', 'b:', 'c:a']
          .map((s) => {
            const [id, needs] = s.split(':') as [string, string];
            return `[[tasks]]\nid = "${id}"\nneeds = [${
              needs
                ? needs
                    .split(',')
                    .map((n) => `"${n}"`)
                    .join(', ')
                : ''
            }]\n`;
          })
          .join(''),
    });
    assert.equal(problems, [], show(problems));
    assert.equal(topologicalOrder(plan!), ['a', 'b', 'd', 'e', 'c']);
  }),
);

test('env file syntax', () => {
  const parsed = parseEnvFile('# c\n\nA=1\nexport B = two words \nC="q x"\nD=\'s\'\nE=a=b\r\nF=\n');
  assert.equal(parsed, { ok: true, value: { A: '1', B: 'two words', C: 'q x', D: 's', E: 'a=b', F: '' } });
  const noEq = parseEnvFile('A=1\nnot a pair\n');
  assert.equal(noEq, { ok: false, error: { line: 2, message: 'line 2 is not KEY=VALUE' } });
  assert.is(parseEnvFile('1A=x').ok, false);
  assert.is(parseEnvFile('A="open').ok, false);
});

test(
  '{{event.file}} has no value in a plan',
  withTimeout(5000, async () => {
    const { problems } = await load({
      'plan.toml': 'slug = "s"\n[hooks]\npost_run = ["x", "{{event.file}}"]\n[[tasks]]\nid = "a"\ncommand = ["x", "{{ event.file }}"]\n',
    });
    assert.ok(has(problems, 'hooks.post_run[1]', 'missing_value'), show(problems));
    assert.ok(has(problems, 'tasks[0].command[1]', 'missing_value'), show(problems));
  }),
);

test(
  'the fixture plans of test-fixtures load; invalid.toml lists all its problems',
  withTimeout(20_000, async () => {
    const names = readdirSync(plansPath()).filter((n) => n.endsWith('.toml'));
    assert.ok(names.length > 10);
    for (const name of names) {
      const result = await loadPlan(join(plansPath(), name));
      if (name === 'invalid.toml') {
        assert.not.ok(result.ok);
        if (!result.ok) assert.ok(result.error.length >= 5, show(result.error));
        continue;
      }
      // Some prompts (a 1 MiB one) are generated by the tests that use them.
      const problems = result.ok ? [] : result.error.filter((p) => !(p.reason === 'missing_file' && p.path.endsWith('.prompt_file')));
      assert.equal(problems, [], `${name}:\n${show(problems)}`);
    }
  }),
);

test(
  'files a plan names are read once each; a missing one names its error code',
  withTimeout(5000, async () => {
    const { plan, problems } = await load({
      'plan.toml':
        'slug = "s"\n[defaults]\ncommand = ["x"]\nenv_file = "shared.env"\n' +
        ['a', 'b', 'c'].map((id) => `[[tasks]]\nid = "${id}"\nenv_file = "shared.env"\nprompt_file = "p/${id}.md"\n`).join(''),
      'shared.env': 'TOKEN=t1\n',
      'p/a.md': 'do a',
      'p/b.md': 'do b',
      'p/c.md': 'do c',
    });
    assert.equal(problems, [], show(problems));
    assert.equal(
      plan!.tasks.map((t) => [t.prompt, t.envFileValues['TOKEN']]),
      [
        ['do a', 't1'],
        ['do b', 't1'],
        ['do c', 't1'],
      ],
    );
    const missing = await load({ 'plan.toml': 'slug = "s"\n[[tasks]]\nid = "a"\ncommand = ["x"]\nprompt_file = "nowhere.md"\n' });
    assert.is(missing.problems.length, 1);
    assert.match(missing.problems[0]!.message, /nowhere\.md cannot be read \(ENOENT\)/);
  }),
);

test.run();
