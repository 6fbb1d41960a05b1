// A retry prompt points at the right place: evidence naming the previous attempt's worktree
// (which still exists) is rewritten relative to the new one; the full output is named in
// the state dir's evidence, never in another worktree (real bin).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { savedPrompts, tempDir } from '@runplan/test-fixtures';
import { mockPlan, ofType, records, runplan, withPlan } from './support.js';

const PLAN = mockPlan({
  slug: 'paths',
  tasks: `[[tasks]]
id = "fix"
prompt = """
mock: on-attempt 1 stderr error: @CWD@/src/fmt.py:3: missing docstring
mock: on-attempt 1 exit 1
mock: write src/fmt.py fixed
mock: commit fix
"""
`,
});

test(
  "the retry prompt never names the previous attempt's worktree: its paths become relative, the evidence dir is named",
  withPlan(PLAN, { timeoutMs: 120_000 }, async (f) => {
    const prompts = tempDir('runplan-prompts-');
    try {
      const r = await runplan(['run', f.plan], { env: { ...f.env, MOCK_PROMPTS: prompts.path } });
      assert.is(r.exitCode, 0, r.stderr);
      const started = ofType(await records(f.repo, 'paths'), 'attempt-started');
      const firstTree = String(started[0]!.worktree);
      const evidenceDir = String(started[0]!.evidenceDir);
      assert.ok(firstTree.length > 0);
      const second = savedPrompts(prompts.path, 'fix')[1]!;
      assert.match(second, /attempt 1 of this task failed/);
      assert.ok(!second.includes(firstTree), `the retry prompt names ${firstTree}:\n${second}`);
      assert.match(second, /\| error: src\/fmt\.py:3: missing docstring/);
      assert.ok(second.includes(evidenceDir), `the retry prompt names the evidence dir ${evidenceDir}:\n${second}`);
    } finally {
      prompts.cleanup();
    }
  }),
);

test.run();
