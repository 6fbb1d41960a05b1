// The slug's [budget] is the stop-loss between a loop's rounds too: once the spend, with what
// the attempt's rounds spent so far, reaches it, no further round starts (real bin).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ofType, records, runplan, mockPlan, withPlan } from './support.js';

// Each round spends 600 tokens (500 in, 100 out) and adds a line; verify passes at 3 lines.
const PLAN = mockPlan({
  slug: 'loop-budget',
  top: ['[budget]', 'max_tokens = 1000'],
  tasks: `[[tasks]]
id = "improve"
prompt = """
mock: usage 500 100 0 0 0.01
mock: until-file rounds.txt 3
"""
until = ["mock-verify", "rounds.txt", "3"]
rounds = 3
`,
});

test(
  'a loop whose rounds spent the budget stops before the next round: class budget, max_tokens, round 3 never runs',
  withPlan(PLAN, { timeoutMs: 90_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    const rs = await records(f.repo, 'loop-budget');
    assert.equal(
      ofType(rs, 'round-done').map((d) => [d.round, d.action]),
      [
        [1, 'next_round'],
        [2, 'next_round'],
      ],
    );
    assert.equal(
      ofType(rs, 'command-settled').map((d) => d.round),
      [1, 2],
      'no command for round 3',
    );
    const failed = ofType(rs, 'run-failed')[0]!;
    assert.is(failed.class, 'budget');
    assert.is(failed.reason, 'max_tokens');
    assert.match(String(failed.message), /before round 3: 1200 tokens spent, budget\.max_tokens = 1000/);
  }),
);

test.run();
