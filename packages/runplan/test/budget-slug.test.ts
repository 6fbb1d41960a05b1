// Budgets are a stop-loss for the slug: the spend is the slug's, across --fresh,
// continuations and new runs; only raising [budget] or an explicit, journaled
// --reset-budget lets more be spent (real bin).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts } from '@runplan/test-fixtures';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPaths, slugPaths } from '../src/host/state.js';
import { readRun } from '../src/resume/inspect.js';
import { SPEND_RECORDS, slugSpend } from '../src/resume/slug-spend.js';
import { budgetCell } from '../src/observe/slug-budget.js';
import { ofType, records, runIds, runplan, withPlan } from './support.js';

test(
  'after a budget stop, --fresh and --new-run refuse budget_spent (the hint names [budget] and --reset-budget); --reset-budget is journaled and runs',
  withPlan('budget', { timeoutMs: 150_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    // The report's "to go on" says what a bare rerun meets.
    const report = JSON.parse((await runplan(['report', 'budget', '--json'], f)).stdout) as { resumeNote: string | null };
    assert.match(
      String(report.resumeNote),
      /refused while the slug's budget is spent: raise \[budget\] in the plan, or add --reset-budget/,
    );
    for (const flag of ['--fresh', '--new-run']) {
      const refused = await runplan(['run', f.plan, flag], f);
      assert.is(refused.exitCode, 3, `${flag}: ${refused.stderr}`);
      assert.match(
        refused.stderr,
        /^runplan: budget_spent: slug budget has spent its budget across its runs \(\d+ tokens spent, budget\.max_tokens = 1500;/m,
      );
      assert.match(refused.stderr, /hint: raise \[budget\] in .*, or runplan run .* --reset-budget/);
      assert.not.match(refused.stderr, /hint:.*--fresh/);
      assert.is(runIds(f.repo, 'budget').length, 1, `${flag}: nothing written`);
    }
    const reset = await runplan(['run', f.plan, '--reset-budget'], f);
    assert.is(reset.exitCode, 0, reset.stderr);
    const started = ofType(await records(f.repo, 'budget'), 'run-started')[0]!;
    assert.is(started.budgetReset, true);
    assert.is(started.usageCarried.inputTokens, 0);
    assert.is(dispatchCounts(f.ledger).get('b3'), 1);
  }),
);

test(
  'status shows the slug-wide spend against the budget (human and --json), across a continuation under a raised [budget]',
  withPlan('budget', { timeoutMs: 150_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 1, r.stderr);
    const json = await runplan(['status', 'budget', '--json'], f);
    assert.is(json.exitCode, 0, json.stderr);
    const row = JSON.parse(json.stdout) as { slugSpend: Record<string, unknown> };
    assert.equal(row.slugSpend, {
      usage: { inputTokens: 1200, outputTokens: 400, cacheReadTokens: 200, cacheCreationTokens: 200 },
      tokens: 2000,
      costUsd: 0.1,
      maxTokens: 1500,
      maxCostUsd: null,
    });
    const human = await runplan(['status', 'budget'], f);
    assert.match(human.stdout, /^SLUG .* BUDGET +DISK$/m);
    assert.match(human.stdout, /^budget .* 2000\/1500 tok +\S+$/m);
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace(/^max_tokens = 1500$/m, 'max_tokens = 10000\nmax_cost_usd = 5'));
    const more = await runplan(['run', f.plan], f);
    assert.is(more.exitCode, 0, more.stderr);
    const after = JSON.parse((await runplan(['status', 'budget', '--json'], f)).stdout) as { slugSpend: Record<string, unknown> };
    assert.equal([after.slugSpend.tokens, after.slugSpend.maxTokens, after.slugSpend.maxCostUsd], [3000, 10000, 5]);
    assert.match((await runplan(['status', 'budget'], f)).stdout, /^budget .* 3000\/10000 tok \$0\.15\/\$5\.00 +\S+$/m);
    // The report reads the same plan copy: its budget is the run's [budget].
    const report = JSON.parse((await runplan(['report', 'budget', '--json'], f)).stdout) as { budget: Record<string, unknown> };
    assert.equal(report.budget, { maxTokens: 10000, maxCostUsd: 5 });
    // status parses only SPEND_RECORDS of the older runs' journals: the same spend as the whole journals give.
    const slug = slugPaths(join(f.repo.path, '.git', 'runplan'), 'budget');
    const views = (only?: ReadonlySet<string>) =>
      Promise.all(
        runIds(f.repo, 'budget').map(async (id) => ({ journal: (await readRun(runPaths(slug, id).journal, only ? { only } : {})).view })),
      );
    const whole = slugSpend(await views());
    const u = whole.usage;
    assert.is(u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens, 3000);
    assert.equal(slugSpend(await views(SPEND_RECORDS)), whole);
  }),
);

test("status's BUDGET shows a cap and a spend as they are, not rounded to the cent ($0.025 is no $0.03)", () => {
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
  const cell = (costUsd: number, maxCostUsd: number) => budgetCell({ usage, tokens: 0, costUsd, maxTokens: null, maxCostUsd });
  assert.is(cell(0.04, 0.025), '$0.04/$0.025');
  assert.is(cell(0.0049, 0.005), '$0.0049/$0.005');
  assert.is(cell(0.1 + 0.2, 5), '$0.30/$5.00');
  assert.is(cell(0.15, 5), '$0.15/$5.00');
});

test.run();
