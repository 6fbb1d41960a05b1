// Codex reports each thread's running total. A retry or a continuation that resumes the
// thread an earlier attempt counted (`codex exec resume <id>`) adds only what the thread
// spent since: command-settled journals {threadId, lastTotal} and the next report of that
// thread subtracts it (real bin; replay-agent replays one codex process per attempt, the
// numbers of gitmoot#661: 16524 tokens, then 85721 for the whole thread — not 102245).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonLines, runBin, transcriptPath } from '@runplan/test-fixtures';
import { ofType, records, RUNPLAN, runIds, runplan, waitForEvent, waitUntil, withPlan } from './support.js';

const THREAD = '0199a213-81c0-7800-8aa1-bbab2a035a53';
const tokens = (u: Record<string, number>): number => u.inputTokens! + u.outputTokens! + u.cacheReadTokens! + u.cacheCreationTokens!;

// One codex task; its attempt 1 replays `codex exec` and exits 1, later ones `codex exec resume` on the same thread.
function plan(taskCap: number, extra = ''): string {
  return `slug = "codex-threads"
base = "main"
[defaults]
command = ["replay-agent", "{{task.id}}", "{{run.attempt}}"]
format = "codex-json"
deadline = "1m"
grace = "1s"
${extra}
[budget]
max_tokens = 1000000
[repair]
task = ${taskCap}
[[tasks]]
id = "c1"
prompt = "fix the tests"
`;
}

const ENV = {
  REPLAY_TRANSCRIPT_1: transcriptPath('codex-08-exec-thread-first-process.jsonl'),
  REPLAY_EXIT_1: '1',
  REPLAY_TRANSCRIPT: transcriptPath('codex-09-exec-resume-same-thread.jsonl'),
};

// The first attempt's own numbers: codex-08 (cached ⊂ input).
const FIRST = { inputTokens: 16524 - 12288, outputTokens: 0, cacheReadTokens: 12288, cacheCreationTokens: 0 };
// The thread's total after the resume: codex-09.
const WHOLE = { inputTokens: 85417 - 70656, outputTokens: 304, cacheReadTokens: 70656, cacheCreationTokens: 0 };
// What the resume itself spent.
const DELTA = {
  inputTokens: WHOLE.inputTokens - FIRST.inputTokens,
  outputTokens: 304,
  cacheReadTokens: 70656 - 12288,
  cacheCreationTokens: 0,
};

// Starts `runplan ARGS` and kill -9s it once attempt 2's agent (which lingers) has reported its
// turn.completed in its transcript: the crash leaves an attempt whose usage only the transcript holds.
async function killWhenSecondAttemptReported(args: string[], env: NodeJS.ProcessEnv, repo: Parameters<typeof records>[0]): Promise<void> {
  let pid = 0;
  const running = runBin(RUNPLAN, args, { env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
  await waitForEvent(repo, 'codex-threads', 'attempt-started'); // the slug has a journal to read
  const transcript = await waitUntil('attempt 2 started', async () => {
    const second = ofType(await records(repo, 'codex-threads'), 'attempt-started').find((d) => d.attempt === 2);
    return second === undefined ? undefined : join(String(second.evidenceDir), 'transcript.jsonl');
  });
  await waitUntil(
    'attempt 2 wrote its turn.completed',
    () => existsSync(transcript) && readFileSync(transcript, 'utf8').includes('turn.completed'),
  );
  process.kill(pid, 'SIGKILL');
  await running;
}

test(
  'a retry resuming the thread: the second attempt adds 69197 (the delta), the run spends 85721, not 102245',
  withPlan(plan(2), { timeoutMs: 90_000 }, async (f) => {
    const r = await runplan(['run', f.plan], { ...f, env: { ...f.env, ...ENV } });
    assert.is(r.exitCode, 0, r.stderr);
    const rs = await records(f.repo, 'codex-threads');
    const settled = ofType(rs, 'command-settled');
    assert.is(settled.length, 2);
    assert.equal(settled[0]!.usage, FIRST);
    assert.equal(settled[0]!.threads, [{ threadId: THREAD, lastTotal: FIRST }]);
    assert.equal(settled[1]!.usage, DELTA);
    assert.equal(settled[1]!.threads, [{ threadId: THREAD, lastTotal: WHOLE }]);
    assert.is(tokens(settled[1]!.usage), 69197);
    const complete = ofType(rs, 'run-complete')[0]!;
    assert.is(tokens(complete.usage), 85721);
    const status = await runplan(['status', 'codex-threads', '--json'], f);
    const row = parseJsonLines(status.stdout)[0] as { usage: Record<string, number> };
    assert.is(tokens(row.usage), 85721);
  }),
);

test(
  'a continuation resuming the thread a failed run counted adds only the delta; the slug spends 85721',
  withPlan(plan(1), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, ...ENV };
    const first = await runplan(['run', f.plan], { ...f, env });
    assert.is(first.exitCode, 1, first.stderr);
    const second = await runplan(['run', f.plan, '--retry', 'c1'], { ...f, env });
    assert.is(second.exitCode, 0, second.stderr);
    assert.is(runIds(f.repo, 'codex-threads').length, 2);
    const rs = await records(f.repo, 'codex-threads');
    const started = ofType(rs, 'run-started')[0]!;
    assert.is(typeof started.continues, 'string', 'the second run continues the first');
    assert.is(tokens(started.usageCarried), 16524);
    const settled = ofType(rs, 'command-settled');
    assert.is(settled.length, 1);
    assert.is(settled[0]!.attempt, 2);
    assert.equal(settled[0]!.usage, DELTA);
    assert.is(tokens(ofType(rs, 'run-complete')[0]!.usage), 85721);
  }),
);

test(
  'kill -9 while the attempt resuming the thread lingers: the resume recounts its transcript as the delta, and the next attempt on the thread adds nothing new',
  withPlan(plan(3, 'result_grace = "5m"'), { timeoutMs: 120_000 }, async (f) => {
    const env = { ...f.env, ...ENV, REPLAY_LINGER_2: '120' };
    await killWhenSecondAttemptReported(['run', f.plan], env, f.repo);
    const r = await runplan(['run', f.plan], { ...f, env: { ...f.env, ...ENV } });
    assert.is(r.exitCode, 0, r.stderr);
    const rs = await records(f.repo, 'codex-threads');
    const recount = ofType(rs, 'usage');
    assert.is(recount.length, 1);
    assert.equal(recount[0]!.usage, DELTA);
    assert.equal(recount[0]!.threads, [{ threadId: THREAD, lastTotal: WHOLE }]);
    const settled = ofType(rs, 'command-settled');
    assert.equal(
      settled.map((d) => [d.attempt, tokens(d.usage)]),
      [
        [1, 16524],
        [3, 0],
      ],
    );
    assert.is(tokens(ofType(rs, 'run-complete')[0]!.usage), 85721);
  }),
);

test(
  'kill -9 in a continuation whose agent resumed the thread a failed run counted: `runplan stop` recounts the delta, the slug spends 85721',
  withPlan(plan(1, 'result_grace = "5m"'), { timeoutMs: 120_000 }, async (f) => {
    const env = { ...f.env, ...ENV, REPLAY_LINGER_2: '120' };
    const first = await runplan(['run', f.plan], { ...f, env });
    assert.is(first.exitCode, 1, first.stderr);
    await killWhenSecondAttemptReported(['run', f.plan, '--retry', 'c1'], env, f.repo);
    const stop = await runplan(['stop', 'codex-threads'], f);
    assert.is(stop.exitCode, 0, stop.stderr);
    const rs = await records(f.repo, 'codex-threads');
    const recount = ofType(rs, 'usage');
    assert.is(recount.length, 1);
    assert.equal(recount[0]!.usage, DELTA, 'only what the resume spent on the thread since the first run counted it');
    const status = await runplan(['status', 'codex-threads', '--json'], f);
    const rows = parseJsonLines(status.stdout) as { slugSpend?: { usage: Record<string, number> } }[];
    assert.is(tokens(rows[0]!.slugSpend!.usage), 85721, status.stdout);
  }),
);

test.run();
