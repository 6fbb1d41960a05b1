// What a crashed attempt's agent reported is recounted once: a resume (or stop) that journaled
// the recount and then died too does not make the next one count it again.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, waitUntil } from '@runplan/test-fixtures';
import { readJournal } from '@runplan/journal';
import { mockPlan, ofType, records, RUNPLAN, runIds, runplan, slugDir, waitForEvent, withPlan, type Fixture } from './support.js';

// Attempt 1 reports one turn of 1000 input tokens, then hangs; attempt 2 reports 1 token.
const PLAN = mockPlan({
  slug: 'recount',
  defaults: ['deadline = "5m"', 'grace = "300ms"'],
  tasks: `[[tasks]]
id = "a"
prompt = """
mock: on-attempt 1 usage 1000 0 0 0 0.5
mock: on-attempt 1 turn
mock: on-attempt 1 sleep 120
mock: usage 1 0 0 0 0.001
mock: write out/a.txt a
"""
`,
});

// kill -9 while attempt 1 hangs, once its turn is in the transcript.
async function crashWhileHanging(f: Fixture): Promise<void> {
  let pid = 0;
  const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, cwd: f.repo.path, timeoutMs: 60_000, onSpawn: (p) => (pid = p) });
  await waitForEvent(f.repo, 'recount', 'attempt-started');
  const started = ofType(await records(f.repo, 'recount'), 'attempt-started')[0]!;
  const transcript = join(String(started.evidenceDir), 'transcript.jsonl');
  await waitUntil(
    'attempt 1 reported its turn',
    () => existsSync(transcript) && readFileSync(transcript, 'utf8').includes('"type":"assistant"'),
  );
  process.kill(pid, 'SIGKILL');
  await running;
}

for (const second of ['run', 'stop'] as const) {
  test(
    `a resume killed after journaling the recount, then ${second}: attempt 1's 1000 tokens are counted once`,
    withPlan(PLAN, {}, async (f) => {
      await crashWhileHanging(f);
      const killed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:usage' } });
      assert.is(killed.signal, 'SIGKILL', killed.stderr);
      if (second === 'stop') assert.is((await runplan(['stop', 'recount'], f)).exitCode, 0);
      const r = await runplan(['run', f.plan, '--json'], f);
      assert.is(r.exitCode, 0, r.stderr);
      let recounts = 0;
      for (const id of runIds(f.repo, 'recount'))
        recounts += (await readJournal(join(slugDir(f.repo, 'recount'), id, 'journal.jsonl'))).records.filter(
          (e) => e.type === 'usage',
        ).length;
      assert.is(recounts, 1, 'one usage record for attempt 1 in all the slug journals');
      const status = JSON.parse((await runplan(['status', '--json'], f)).stdout) as { slugSpend: { usage: { inputTokens: number } } };
      assert.is(status.slugSpend.usage.inputTokens, 1001);
    }),
  );
}

test.run();
