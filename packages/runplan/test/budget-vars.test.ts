// {{budget.remaining_usd}} / {{budget.remaining_tokens}}: what is left of the slug's [budget]
// when an attempt starts (earlier attempts and earlier runs spent the rest), passed to the
// agent's own cap; refused at validate where nothing could fill them (real bin).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir, writePlan } from '@runplan/test-fixtures';
import { ofType, records, runIds, runplan, withPlan } from './support.js';

// Every attempt spends 1000 tokens and $0.05; a fails once, b fails its first two attempts.
const PLAN = `slug = "budget-vars"
base = "main"

[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}", "usd={{budget.remaining_usd}}", "tokens={{ budget.remaining_tokens }}"]
format = "claude-stream-json"
gates = [["mock-gate", "--label", "gate-{{task.id}}-{{budget.remaining_tokens}}", "0"]]
deadline = "5m"
grace = "2s"

[budget]
max_tokens = 10000
max_cost_usd = 1

[repair]
task = 2

[[tasks]]
id = "a"
prompt = """
mock: usage 600 200 100 100 0.05
mock: fail-first 1
mock: write out/a.txt a
"""

[[tasks]]
id = "b"
needs = ["a"]
prompt = """
mock: usage 600 200 100 100 0.05
mock: fail-first 2
mock: write out/b.txt b
"""
`;

test(
  'each attempt sees the budget less what earlier attempts and the earlier run spent; gates see it too',
  withPlan(PLAN, { timeoutMs: 150_000 }, async (f) => {
    const scratch = tempDir('budget-vars-');
    try {
      const args = join(scratch.path, 'args');
      const gates = join(scratch.path, 'gates');
      const env = { ...f.env, MOCK_ARGS: args, MOCK_GATE_LEDGER: gates };
      const first = await runplan(['run', f.plan], { ...f, env });
      assert.is(first.exitCode, 1, first.stderr);
      // The second run continues the failed one: the slug's spend carries over.
      const second = await runplan(['run', f.plan, '--retry', 'b'], { ...f, env });
      assert.is(second.exitCode, 0, second.stderr);
      assert.is(runIds(f.repo, 'budget-vars').length, 2);
      const seen = readFileSync(args, 'utf8').trim().split('\n');
      assert.equal(seen, [
        'a 1 usd=1.00 tokens=10000',
        'a 2 usd=0.95 tokens=9000',
        'b 1 usd=0.90 tokens=8000',
        'b 2 usd=0.85 tokens=7000',
        'b 3 usd=0.80 tokens=6000',
      ]);
      // Gates of the successful attempts render the same value the attempt started with.
      const labels = readFileSync(gates, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0]);
      assert.equal(labels, ['gate-a-9000', 'gate-b-6000']);
      const settled = ofType(await records(f.repo, 'budget-vars'), 'command-settled');
      assert.is(settled.length, 1, 'the second run ran one attempt');
    } finally {
      scratch.cleanup();
    }
  }),
);

test(
  'validate refuses a budget variable with no such [budget] limit, and in the pre_run hook',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    const plan = writePlan(
      f.repo.path,
      `slug = "budget-vars-bad"
base = "main"

[hooks]
pre_run = ["mock-gate", "{{budget.remaining_tokens}}", "0"]

[defaults]
command = ["mock-agent", "{{task.id}}", "{{budget.remaining_usd}}"]
format = "claude-stream-json"

[budget]
max_tokens = 100

[[tasks]]
id = "t"
prompt = "hi"
gates = [["mock-gate", "{{budget.remaining_usd}}"]]
`,
      {},
      { as: 'bad.toml' },
    );
    const r = await runplan(['validate', plan], f);
    assert.is(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /not_allowed_in_tier: \S+: hooks\.pre_run\[1\]: .*only in task commands, gates and until/);
    assert.match(r.stderr, /missing_value: \S+: defaults\.command\[2\]: names \{\{budget\.remaining_usd\}\} .*no \[budget\] max_cost_usd/);
    assert.match(r.stderr, /missing_value: \S+: tasks\[0\]\.gates\[0\]\[1\]: /);
    assert.not.match(r.stderr, /missing_value: .*remaining_tokens/);
    assert.match(r.stderr, /3 problem\(s\)/);
    // post_run is not the tier: the template language itself refuses it.
    const post = writePlan(
      f.repo.path,
      `slug = "budget-vars-post"
base = "main"

[hooks]
post_run = ["mock-gate", "{{budget.remaining_tokens}}", "0"]

[budget]
max_tokens = 100

[[tasks]]
id = "t"
prompt = "hi"
command = ["mock-agent", "{{task.id}}", "{{budget.remaining_tokens}}"]
format = "claude-stream-json"
`,
      {},
      { as: 'post.toml' },
    );
    const p = await runplan(['validate', post], f);
    assert.is(p.exitCode, 2, p.stderr);
    assert.match(p.stderr, /not_allowed_in_tier: \S+: hooks\.post_run\[1\]: /);
    assert.match(p.stderr, /1 problem\(s\)/);
    assert.not.match(p.stderr, /tasks\[0\]\.command/);
  }),
);

test.run();
