// A crash while a loop round's agent runs: what that round's agent reported before the crash
// is recounted from the round's own transcript (transcript.round-N.jsonl) and journaled as
// `usage`, although earlier rounds of the same attempt settled (real bin, kill -9).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBin, waitUntil } from '@runplan/test-fixtures';
import { mockPlan, ofType, records, RUNPLAN, runplan, waitForEvent, withPlan } from './support.js';

// Each round: one more line of rounds.txt, one assistant turn (100 in, 20 out), then the agent
// waits for `release` in its worktree (the test creates it for round 1 only) and removes it —
// in attempt 1 only: the resumed loop's attempt 2 runs straight through.
const PLAN = mockPlan({
  slug: 'loop-recount',
  tasks: `[[tasks]]
id = "improve"
prompt = """
mock: until-file rounds.txt 3
mock: turn
mock: on-attempt 1 wait-file release
mock: on-attempt 1 rm release
"""
until = ["mock-verify", "rounds.txt", "3"]
rounds = 3
`,
});

// Runs the plan and kill -9s the coordinator once round 2's agent reported its turn (round 1's
// command settled: the test lets its agent go on), and checks what settled before the crash.
async function crashDuringRound2(f: { plan: string; env: Record<string, string>; repo: Parameters<typeof records>[0] }): Promise<void> {
  let pid = 0;
  const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, cwd: f.repo.path, timeoutMs: 140_000, onSpawn: (p) => (pid = p) });
  await waitForEvent(f.repo, 'loop-recount', 'attempt-started');
  const started = ofType(await records(f.repo, 'loop-recount'), 'attempt-started')[0]!;
  const turnIn = (round: number) => {
    const path = join(String(started.evidenceDir), `transcript.round-${round}.jsonl`);
    return existsSync(path) && readFileSync(path, 'utf8').includes('"type":"assistant"');
  };
  await waitUntil('round 1 reported its turn', () => turnIn(1));
  writeFileSync(join(String(started.worktree), 'release'), '');
  await waitUntil('round 2 reported its turn', () => turnIn(2));
  process.kill(pid, 'SIGKILL');
  await running;
  const settled = ofType(await records(f.repo, 'loop-recount'), 'command-settled');
  assert.equal(
    settled.map((d) => [d.attempt, d.round]),
    [[1, 1]],
    'round 1’s command settled before the crash, naming its round',
  );
}

const ROUND_2 = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheCreationTokens: 0 };

test(
  'kill -9 during round 2 of a loop: the resume recounts round 2’s transcript (round 1 settled), and the loop completes',
  withPlan(PLAN, { timeoutMs: 150_000 }, async (f) => {
    await crashDuringRound2(f);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const recount = ofType(await records(f.repo, 'loop-recount'), 'usage');
    assert.equal(
      recount.map((d) => [d.attempt, d.round, String(d.transcript).endsWith('/transcript.round-2.jsonl')]),
      [[1, 2, true]],
    );
    assert.equal(recount[0]!.usage, ROUND_2);
  }),
);

test(
  'kill -9 during round 2 of a loop, then `runplan stop`: the same recount is journaled before the receipt',
  withPlan(PLAN, { timeoutMs: 150_000 }, async (f) => {
    await crashDuringRound2(f);
    const stop = await runplan(['stop', 'loop-recount'], f);
    assert.is(stop.exitCode, 0, stop.stderr);
    const rs = await records(f.repo, 'loop-recount');
    const recount = ofType(rs, 'usage');
    assert.equal(
      recount.map((d) => [d.attempt, d.round]),
      [[1, 2]],
    );
    assert.equal(recount[0]!.usage, ROUND_2);
    assert.equal(ofType(rs, 'run-failed')[0]!.class, 'interrupted');
  }),
);

test.run();
