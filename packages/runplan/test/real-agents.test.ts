// The rules of issue 15 over real agent output: interpreter unit tests over the shared
// transcripts (test-fixtures/transcripts), and the real bin with `replay-agent` writing them.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, tempDir, transcriptPath } from '@runplan/test-fixtures';
import { interpretTranscript, totalTokens } from '../src/agent/consumer.js';
import { resetFromText } from '../src/agent/state.js';
import { classifyCommand } from '../src/repair/classify.js';
import type { AgentFormat } from '../src/plan/types.js';
import { ofType, records, runplan, withPlan } from './support.js';

const NO_CODES = { repair: { providerExitCodes: [] } };

// A transcript interpreted as after a clean exit (code 0), and what classifyCommand makes of it.
function replayed(name: string, format: AgentFormat = formatOf(name)) {
  const state = interpretTranscript(format, readFileSync(transcriptPath(name)));
  return { state, outcome: classifyCommand({ reason: 'exited', exitCode: 0 }, state, NO_CODES) };
}

// The format a shared transcript is in, from its name.
function formatOf(name: string): AgentFormat {
  if (name.startsWith('codex')) return 'codex-json';
  if (name.startsWith('cursor')) return 'cursor-stream-json';
  if (name.startsWith('gemini')) return name.endsWith('.json') ? 'gemini-json' : 'gemini-stream-json';
  return 'claude-stream-json';
}

// One line of a transcript, as a transcript of its own (a real line without its neighbours).
function lineOf(name: string, index: number): string {
  const dir = tempDir('replay-line-');
  cleanups.push(dir.cleanup);
  const file = join(dir.path, `${name}.line${index}`);
  writeFileSync(file, `${readFileSync(transcriptPath(name), 'utf8').split('\n')[index]}\n`);
  return file;
}
const cleanups: Array<() => void> = [];
test.after(() => {
  for (const c of cleanups) c();
});

// A one-task plan whose command is the replay agent.
function replayPlan(slug: string, format: AgentFormat, extra = '', repair = ''): string {
  return `slug = "${slug}"
base = "main"
[defaults]
command = ["replay-agent", "{{task.id}}", "{{run.attempt}}"]
format = "${format}"
deadline = "1m"
grace = "1s"
${extra}
[repair]
backoff = "100ms"
provider = 1
${repair}
[[tasks]]
id = "r1"
prompt = "replay"
`;
}

// The run's one receipt (run-failed or run-complete) and the journal.
async function receipt(f: Parameters<Parameters<typeof withPlan>[2]>[0], slug: string) {
  const rs = await records(f.repo, slug);
  const terminal = rs.filter((r) => r.terminal === true);
  assert.is(terminal.length, 1, 'one terminal record');
  return { rs, type: terminal[0]!.type, data: terminal[0]!.data as Record<string, any> };
}

// --- usage and cost -----------------------------------------------------------------------

// Each shared transcript's tokens, cost and session id, as its README computes them.
const NUMBERS: Array<[string, number, number | undefined, string | undefined]> = [
  ['claude-01-success-opus4.jsonl', 15351, 0.2882215, 'acc21b20-13b3-423c-9191-01925b546d5b'],
  ['claude-02-success-full-session-haiku+main-2.1.200.jsonl', 59416, 0.426424, undefined],
  ['claude-03-error-max-turns-modelUsage-empty-2.1.200.jsonl', 29627, 0.165684, undefined],
  ['claude-04-api-error-404-subtype-success-2.1.200.jsonl', 0, 0, undefined],
  ['claude-05-error-max-turns-haiku+opus-31turns.jsonl', 1454066, 1.44179975, undefined],
  ['claude-06-success-72turns-haiku+sonnet.jsonl', 2292231, 0.8743159, undefined],
  ['claude-07-cut-off-no-result.jsonl', 13502, undefined, undefined],
  ['claude-08-sample-turns-claude-code-action.jsonl', 1210, 0.0347, undefined],
  ['codex-01-docs-sample.jsonl', 24885, undefined, '0199a213-81c0-7800-8aa1-bbab2a035a53'],
  ['codex-02-success-0.147.jsonl', 11667, undefined, undefined],
  ['codex-07-reconnect-then-success.jsonl', 21314, undefined, undefined],
  ['gemini-01-stream-success.jsonl', 1500, undefined, 'c25acda3-b5f1-4d9a-9b2e-3f0e5c1d7a11'],
  ['gemini-02-json-success.json', 25113, undefined, '7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f'],
];

test("every shared transcript's tokens, cost and session id are its README's", () => {
  for (const [name, tokens, cost, session] of NUMBERS) {
    const { state } = replayed(name);
    assert.is(totalTokens(state.usage), tokens, name);
    if (cost === undefined) assert.is(state.costUsd, undefined, name);
    else assert.ok(Math.abs((state.costUsd ?? -1) - cost) < 1e-9, `${name}: cost ${state.costUsd}`);
    if (session !== undefined) assert.is(state.sessionId, session, name);
  }
});

test('an error_during_execution result with all-zero usage after assistant lines with usage counts the assistant sum', () => {
  // claude-07's assistant lines, then the terminal line an aborted 2.1.x session writes.
  const zeroed =
    '{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["aborted"],"session_id":"499dcce4-04aa-4a3e-9e0c-ea0228fa87c9","total_cost_usd":0.0507,' +
    '"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{}}\n';
  const text = readFileSync(transcriptPath('claude-07-cut-off-no-result.jsonl'), 'utf8') + zeroed;
  const state = interpretTranscript('claude-stream-json', text);
  assert.is(totalTokens(state.usage), 13502);
  assert.is(state.costUsd, 0.0507);
  assert.is(state.errorMessage, 'error_during_execution: aborted');
});

test(
  'bin: a zeroed error_during_execution result replayed: command-settled journals the assistant sum, not 0',
  withPlan(replayPlan('replay-zeroed', 'claude-stream-json'), { timeoutMs: 90_000 }, async (f) => {
    const dir = tempDir('replay-zeroed-');
    cleanups.push(dir.cleanup);
    const file = join(dir.path, 'zeroed.jsonl');
    const zeroed =
      '{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["aborted"],"total_cost_usd":0.0507,' +
      '"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{}}\n';
    writeFileSync(file, readFileSync(transcriptPath('claude-07-cut-off-no-result.jsonl'), 'utf8') + zeroed);
    const r = await runplan(['run', f.plan], { ...f, env: { ...f.env, REPLAY_TRANSCRIPT: file } });
    assert.is(r.exitCode, 1, r.stderr);
    const u = ofType(await records(f.repo, 'replay-zeroed'), 'command-settled')[0]!.usage;
    assert.equal(u, { inputTokens: 4, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 13497 });
  }),
);

// The gitmoot#661 case: `codex exec` then `codex exec resume` on one thread in one command.
const EXEC_THEN_RESUME = [
  '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
  '{"type":"turn.started"}',
  '{"type":"turn.completed","usage":{"input_tokens":16524,"cached_input_tokens":12288,"output_tokens":0}}',
  '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
  '{"type":"turn.started"}',
  '{"type":"turn.completed","usage":{"input_tokens":85417,"cached_input_tokens":70656,"output_tokens":304}}',
  '',
].join('\n');

test('codex: exec then exec resume on one thread counts the last running total (85721), not the sum (102245)', () => {
  const state = interpretTranscript('codex-json', EXEC_THEN_RESUME);
  assert.is(totalTokens(state.usage), 85721);
  assert.is(state.usage.cacheReadTokens, 70656);
});

test('codex: two threads in one command are both counted; the older session.created shape names the session', () => {
  const lines = EXEC_THEN_RESUME.split('\n');
  lines[3] = '{"type":"session.created","session_id":"other"}';
  const state = interpretTranscript('codex-json', lines.join('\n'));
  assert.is(totalTokens(state.usage), 85721 + 16524);
  assert.is(state.sessionId, 'other');
});

test(
  'bin: a command running exec then exec resume (replayed) journals 85721 tokens for the attempt',
  withPlan(replayPlan('replay-resume', 'codex-json'), { timeoutMs: 90_000 }, async (f) => {
    const dir = tempDir('replay-resume-');
    cleanups.push(dir.cleanup);
    const file = join(dir.path, 'exec-resume.jsonl');
    writeFileSync(file, EXEC_THEN_RESUME);
    const r = await runplan(['run', f.plan], { ...f, env: { ...f.env, REPLAY_TRANSCRIPT: file } });
    assert.is(r.exitCode, 0, r.stderr);
    const u = ofType(await records(f.repo, 'replay-resume'), 'command-settled')[0]!.usage;
    assert.is(u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens, 85721);
  }),
);

// --- provider refusals ------------------------------------------------------------------

test('claude-09: a rejected rate_limit_event and a 429 result are a provider refusal', () => {
  const { state, outcome } = replayed('claude-09-rate-limit-rejected-event+429.jsonl');
  assert.equal(outcome, { class: 'provider', reason: 'provider_limited' });
  assert.is(state.resetAtMs, 1700003600 * 1000);
  assert.is(state.errorMessage, "You've hit your limit · resets 7pm (UTC)", 'never "success: …"');
});

test('claude-09 line 2 alone (429 without a rate_limit_event, API-key auth): provider, reset 7pm UTC next', () => {
  const state = interpretTranscript('claude-stream-json', readFileSync(lineOf('claude-09-rate-limit-rejected-event+429.jsonl', 1)));
  assert.equal(classifyCommand({ reason: 'exited', exitCode: 0 }, state, NO_CODES), { class: 'provider', reason: 'provider_limited' });
  assert.ok(state.resetAtMs !== undefined && state.resetAtMs > Date.now(), 'the next 19:00 UTC');
  assert.is(new Date(state.resetAtMs).getUTCHours(), 19);
  assert.ok(state.resetAtMs - Date.now() <= 24 * 3600 * 1000);
});

test('a 529 result with an empty result text (the SDK test shape) is a provider refusal, message names the HTTP status', () => {
  const line = '{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"","session_id":"s"}\n';
  const state = interpretTranscript('claude-stream-json', line);
  assert.equal(classifyCommand({ reason: 'exited', exitCode: 0 }, state, NO_CODES), { class: 'provider', reason: 'provider_limited' });
  assert.is(state.errorMessage, 'API error (HTTP 529)');
});

test('claude-12: assistant "error": "rate_limit" and "usage limit reached|epoch": provider, reset from the epoch', () => {
  const { state, outcome } = replayed('claude-12-usage-limit-reached-epoch.jsonl');
  assert.equal(outcome, { class: 'provider', reason: 'provider_limited' });
  assert.is(state.resetAtMs, 1755615600 * 1000);
});

test('claude-13: an API stream idle timeout is a task failure, not a refusal; message is the result text', () => {
  const { state, outcome } = replayed('claude-13-api-error-stream-idle-timeout.jsonl');
  assert.equal(outcome, { class: 'task', reason: 'agent_error' });
  assert.is(state.errorMessage, 'API Error: Stream idle timeout - no chunks received');
});

test('claude-14: error_max_turns with is_error false fails; message is the subtype', () => {
  const { state, outcome } = replayed('claude-14-error-max-turns-is_error-false.jsonl');
  assert.equal(outcome, { class: 'task', reason: 'agent_error' });
  assert.is(state.errorMessage, 'error_max_turns');
});

test('claude-02: a rate_limit_event with status allowed is no refusal', () => {
  const { state, outcome } = replayed('claude-02-success-full-session-haiku+main-2.1.200.jsonl');
  assert.is(outcome, undefined);
  assert.is(state.providerLimited, false);
});

test('codex-05: "You\'ve hit your usage limit" then turn.failed with exit 0: provider, the words kept', () => {
  const { state, outcome } = replayed('codex-05-usage-limit.jsonl');
  assert.equal(outcome, { class: 'provider', reason: 'provider_limited' });
  assert.match(state.errorMessage ?? '', /try again at 12:16 PM/);
});

test('limit wordings: hit your limit, session limit; a time of day is its next occurrence', () => {
  const now = Date.UTC(2026, 0, 10, 20, 0);
  assert.is(resetFromText("You've hit your limit · resets 7pm (UTC)", now), Date.UTC(2026, 0, 11, 19, 0));
  assert.is(resetFromText("You've hit your session limit · resets 9:30pm (UTC)", now), Date.UTC(2026, 0, 10, 21, 30));
  assert.is(resetFromText('resets 7am (Europe/Paris)', now), Date.UTC(2026, 0, 11, 6, 0));
  assert.is(resetFromText('resets 7pm (Not/AZone)', now), undefined);
  const state = interpretTranscript(
    'claude-stream-json',
    `{"type":"result","subtype":"success","is_error":true,"result":"You've hit your session limit · resets 3am (UTC)"}\n`,
  );
  assert.is(state.providerLimited, true);
});

test(
  'bin: a 429 result without a rate_limit_event, exit 0, is class provider (backoff), not task retried at once',
  withPlan(replayPlan('replay-429', 'claude-stream-json', '', 'provider_max_wait = "25h"'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: lineOf('claude-09-rate-limit-rejected-event+429.jsonl', 1) };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 1, r.stderr);
    const { rs, data } = await receipt(f, 'replay-429');
    assert.is(data.class, 'provider', JSON.stringify(data));
    const failed = ofType(rs, 'attempt-closed')[0]!.failure;
    assert.is(failed.reason, 'provider_limited');
    assert.match(failed.message, /You've hit your limit · resets 7pm \(UTC\)/);
    assert.ok(failed.resetAtMs > Date.now(), 'waits for the next 19:00 UTC');
    assert.is(readLedger(f.ledger).length, 1);
  }),
);

test(
  'bin: a reset past provider_max_wait stops the run as provider_reset_too_far (class provider, exit 1) with the rerun command',
  withPlan(replayPlan('replay-far', 'claude-stream-json', '', 'provider_max_wait = "1s"'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: lineOf('claude-09-rate-limit-rejected-event+429.jsonl', 1) };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 1, r.stderr);
    const { rs, data } = await receipt(f, 'replay-far');
    assert.is(data.reason, 'provider_reset_too_far', JSON.stringify(data));
    assert.is(data.class, 'provider');
    const failure = ofType(rs, 'attempt-closed')[0]!.failure;
    assert.match(failure.message, /resets at \d{4}-\d\d-\d\dT19:00:00\.000Z/);
    assert.ok(failure.message.includes(`runplan run ${f.plan}`), failure.message);
    assert.is(readLedger(f.ledger).length, 1, 'no retry, no wait');
  }),
);

// --- torn streams and failed turns -------------------------------------------------------

test('claude-07: no result line is no_result (class task) with exit 0; usage from the assistant lines', () => {
  const { state, outcome } = replayed('claude-07-cut-off-no-result.jsonl');
  assert.equal(outcome, { class: 'task', reason: 'no_result' });
  assert.is(totalTokens(state.usage), 13502);
  assert.is(state.costUsd, undefined);
});

test('codex-03 / codex-07: turn.failed fails with exit 0; a reconnect before turn.completed does not', () => {
  assert.ok(replayed('codex-03-turn-failed-400-invalid-model-0.147.jsonl').outcome, 'a failure');
  const ok = replayed('codex-07-reconnect-then-success.jsonl');
  assert.is(ok.outcome, undefined);
  assert.is(totalTokens(ok.state.usage), 21314);
});

test(
  'bin: claude-07 replayed with exit 0 fails the run as no_result, nothing integrated',
  withPlan(replayPlan('replay-cut', 'claude-stream-json'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('claude-07-cut-off-no-result.jsonl') };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 1, r.stderr);
    const { rs, type } = await receipt(f, 'replay-cut');
    assert.is(type, 'run-failed');
    const closed = ofType(rs, 'attempt-closed');
    assert.is(closed[0]!.reason, 'no_result');
    assert.is(closed[0]!.class, 'task');
    const settled = ofType(rs, 'command-settled')[0]!;
    assert.is(settled.exitCode, 0);
    assert.is(
      settled.usage.inputTokens + settled.usage.outputTokens + settled.usage.cacheCreationTokens + settled.usage.cacheReadTokens,
      13502,
    );
    assert.is(ofType(rs, 'integrated').length, 0);
  }),
);

// A transcript cut off before its terminal line (its first `keep` lines), as a file of its own.
function cutOff(name: string, keep: number): string {
  const dir = tempDir('replay-cut-');
  cleanups.push(dir.cleanup);
  const file = join(dir.path, `${name}.cut`);
  writeFileSync(file, `${readFileSync(transcriptPath(name), 'utf8').split('\n').slice(0, keep).join('\n')}\n`);
  return file;
}

// Each JSON format's real success, cut before its terminal line (codex turn.completed, gemini
// and cursor result, gemini-json's one object), replayed with exit 0.
const CUT: Array<[string, string, AgentFormat, number]> = [
  ['codex', 'codex-02-success-0.147.jsonl', 'codex-json', 3],
  ['gemini', 'gemini-01-stream-success.jsonl', 'gemini-stream-json', 4],
  ['gjson', 'gemini-02-json-success.json', 'gemini-json', 5],
  ['cursor', 'cursor-01-stream-success.jsonl', 'cursor-stream-json', 6],
];

test('a codex, gemini or cursor stream cut off before its terminal line is no_result with exit 0, as a Claude one is', () => {
  for (const [, name, format, keep] of CUT) {
    const state = interpretTranscript(format, readFileSync(cutOff(name, keep)));
    assert.equal(classifyCommand({ reason: 'exited', exitCode: 0 }, state, NO_CODES), { class: 'task', reason: 'no_result' }, name);
  }
});

test(
  'bin: codex, gemini and cursor streams cut off before their terminal line, exit 0, fail as no_result, nothing integrated',
  withPlan(
    `slug = "replay-cut-all"
base = "main"
keep_going = true
[defaults]
command = ["replay-agent", "{{task.id}}", "{{run.attempt}}"]
deadline = "1m"
grace = "1s"
[repair]
task = 1
${CUT.map(
  ([id, name, format, keep]) =>
    `[[tasks]]\nid = "${id}"\nformat = "${format}"\nprompt = "replay"\nenv = { REPLAY_TRANSCRIPT = "${cutOff(name, keep)}" }\n`,
).join('')}`,
    { timeoutMs: 90_000 },
    async (f) => {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const { rs, type } = await receipt(f, 'replay-cut-all');
      assert.is(type, 'run-failed');
      const closed = ofType(rs, 'attempt-closed');
      assert.equal(
        closed.map((c) => [c.taskId, c.reason, c.class]),
        CUT.map(([id]) => [id, 'no_result', 'task']),
      );
      assert.equal(
        ofType(rs, 'command-settled').map((s) => s.exitCode),
        [0, 0, 0, 0],
      );
      assert.match(closed[0]!.failure.message, /without a turn\.completed or turn\.failed line/);
      assert.is(ofType(rs, 'integrated').length, 0);
    },
  ),
);

test(
  'bin: codex-05 replayed with exit 0 (a failed turn) is a provider failure, its words in the message',
  withPlan(replayPlan('replay-codex-limit', 'codex-json'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('codex-05-usage-limit.jsonl') };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 1, r.stderr);
    const { rs, data } = await receipt(f, 'replay-codex-limit');
    assert.is(data.class, 'provider');
    assert.match(ofType(rs, 'attempt-closed')[0]!.failure.message, /try again at 12:16 PM/);
  }),
);

// --- auth and configuration ----------------------------------------------------------

test('claude-04: a 404 for the model (subtype success, is_error) is agent_config_invalid, class environment', () => {
  const { state, outcome } = replayed('claude-04-api-error-404-subtype-success-2.1.200.jsonl');
  assert.equal(outcome, { class: 'environment', reason: 'agent_config_invalid' });
  assert.match(state.errorMessage ?? '', /issue with the selected model/);
  assert.not.match(state.errorMessage ?? '', /success/);
});

test('codex-03: turn.failed 400 for an unsupported model is agent_config_invalid; the error item is not terminal', () => {
  const { outcome } = replayed('codex-03-turn-failed-400-invalid-model-0.147.jsonl');
  assert.equal(outcome, { class: 'environment', reason: 'agent_config_invalid' });
});

test('Claude "Not logged in · Please run /login" and codex 401 Unauthorized are agent_auth_failed', () => {
  // Claude Code 2.1.x's result when no credentials are found (exit 1).
  const claude = interpretTranscript(
    'claude-stream-json',
    '{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","session_id":"s","total_cost_usd":0}\n',
  );
  assert.equal(classifyCommand({ reason: 'exited', exitCode: 1 }, claude, NO_CODES), { class: 'environment', reason: 'agent_auth_failed' });
  // codex exec --json with a revoked key: the turn fails with the HTTP status in the message.
  const codex = interpretTranscript(
    'codex-json',
    '{"type":"turn.started"}\n{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Missing bearer or basic authentication in header"}}\n',
  );
  assert.equal(classifyCommand({ reason: 'exited', exitCode: 1 }, codex, NO_CODES), { class: 'environment', reason: 'agent_auth_failed' });
});

test('claude-03 / claude-05: error_max_turns is a task failure even though its text could mention anything', () => {
  assert.equal(replayed('claude-03-error-max-turns-modelUsage-empty-2.1.200.jsonl').outcome, { class: 'task', reason: 'agent_error' });
  assert.equal(replayed('claude-05-error-max-turns-haiku+opus-31turns.jsonl').outcome, { class: 'task', reason: 'agent_error' });
});

test(
  'bin: claude-04 replayed (exit 1) stops at once as agent_config_invalid, class environment, one attempt, a message saying what to fix',
  withPlan(replayPlan('replay-model', 'claude-stream-json'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('claude-04-api-error-404-subtype-success-2.1.200.jsonl'), REPLAY_EXIT: '1' };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 1, r.stderr);
    const { rs, data } = await receipt(f, 'replay-model');
    assert.is(data.class, 'environment');
    assert.is(data.reason, 'agent_config_invalid');
    assert.match(ofType(rs, 'attempt-closed')[0]!.failure.message, /fix the model/);
    assert.is(readLedger(f.ledger).length, 1, 'never retried');
  }),
);

// --- Gemini CLI ----------------------------------------------------------------------------

test('gemini-01: stream-json success, delta chunks concatenated, cached ⊂ input, total counted once', () => {
  const { state, outcome } = replayed('gemini-01-stream-success.jsonl');
  assert.is(outcome, undefined);
  assert.equal(state.usage, { inputTokens: 600, cacheReadTokens: 400, outputTokens: 500, cacheCreationTokens: 0 });
  assert.is(state.finalMessage, 'Done: the file is written.');
});

test('gemini-02: json success, one pretty-printed object, thoughts counted as output', () => {
  const { state, outcome } = replayed('gemini-02-json-success.json');
  assert.is(outcome, undefined);
  assert.equal(state.usage, { inputTokens: 3676, cacheReadTokens: 21263, outputTokens: 174, cacheCreationTokens: 0 });
  assert.is(state.finalMessage, 'The capital of France is Paris.');
});

test('gemini exit codes: 41 auth, 42/44/52 configuration (environment), 53 turn_limit (task), 1 an error', () => {
  const state = interpretTranscript('gemini-stream-json', readFileSync(transcriptPath('gemini-03-stream-turn-limit.jsonl')));
  const at = (exitCode: number) => classifyCommand({ reason: 'exited', exitCode }, state, NO_CODES);
  assert.equal(at(53), { class: 'task', reason: 'turn_limit' });
  assert.equal(at(41), { class: 'environment', reason: 'agent_auth_failed' });
  for (const code of [42, 44, 52]) assert.equal(at(code), { class: 'environment', reason: 'agent_config_invalid' });
  assert.equal(at(1), { class: 'task', reason: 'agent_error' });
  assert.equal(at(0), { class: 'task', reason: 'agent_error' }, 'status error fails with exit 0 too');
});

test(
  'bin: gemini-03 replayed with exit 53 fails as turn_limit, class task',
  withPlan(replayPlan('replay-gemini-turns', 'gemini-stream-json'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('gemini-03-stream-turn-limit.jsonl'), REPLAY_EXIT: '53' };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 1, r.stderr);
    const closed = ofType((await receipt(f, 'replay-gemini-turns')).rs, 'attempt-closed')[0]!;
    assert.is(closed.reason, 'turn_limit');
    assert.is(closed.class, 'task');
  }),
);

test(
  'bin: gemini-json replayed, exit 41 is agent_auth_failed (never retried); exit 0 succeeds with its tokens journaled',
  withPlan(replayPlan('replay-gemini', 'gemini-json'), { timeoutMs: 90_000 }, async (f) => {
    const file = transcriptPath('gemini-02-json-success.json');
    const denied = await runplan(['run', f.plan], { ...f, env: { ...f.env, REPLAY_TRANSCRIPT: file, REPLAY_EXIT: '41' } });
    assert.is(denied.exitCode, 1, denied.stderr);
    assert.is((await receipt(f, 'replay-gemini')).data.reason, 'agent_auth_failed');
    assert.is(readLedger(f.ledger).length, 1);
  }),
);

test(
  'bin: gemini-json replayed with exit 0 succeeds; command-settled has its session and 25113 tokens',
  withPlan(replayPlan('replay-gemini-ok', 'gemini-json'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('gemini-02-json-success.json') };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 0, r.stderr);
    const settled = ofType(await records(f.repo, 'replay-gemini-ok'), 'command-settled')[0]!;
    assert.is(settled.sessionId, '7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f');
    const u = settled.usage;
    assert.is(u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens, 25113);
  }),
);

// --- Cursor CLI ----------------------------------------------------------------------------

test('cursor-01: stream-json success; session id, final text, no tokens, no cost; an error result fails', () => {
  const { state, outcome } = replayed('cursor-01-stream-success.jsonl');
  assert.is(outcome, undefined);
  assert.is(state.sessionId, '3f9c1a2b-7d4e-4f5a-9b6c-8d7e6f5a4b3c');
  assert.is(state.finalMessage, "I'll write the file.The file is written.");
  assert.is(totalTokens(state.usage), 0);
  assert.is(state.costUsd, undefined);
  const failed = interpretTranscript(
    'cursor-stream-json',
    '{"type":"result","subtype":"error","is_error":true,"result":"tool failed","session_id":"s"}\n',
  );
  assert.equal(classifyCommand({ reason: 'exited', exitCode: 0 }, failed, NO_CODES), { class: 'task', reason: 'agent_error' });
});

test(
  'bin: validate refuses a token or cost budget for a cursor-stream-json task (it reports neither)',
  withPlan(
    `${replayPlan('replay-cursor-budget', 'cursor-stream-json')}\n[budget]\nmax_tokens = 1000\nmax_cost_usd = 1.0\n`,
    {},
    async (f) => {
      const r = await runplan(['validate', f.plan], f);
      assert.is(r.exitCode, 2, r.stderr);
      assert.match(r.stderr, /budget_unreportable: .*budget\.max_tokens: task r1 .*cursor-stream-json, which reports no tokens/);
      assert.match(r.stderr, /budget_unreportable: .*budget\.max_cost_usd: task r1 .*cursor-stream-json, which reports no cost/);
    },
  ),
);

test(
  'bin: cursor-01 replayed succeeds with its session id journaled',
  withPlan(replayPlan('replay-cursor', 'cursor-stream-json'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('cursor-01-stream-success.jsonl') };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 0, r.stderr);
    const settled = ofType(await records(f.repo, 'replay-cursor'), 'command-settled')[0]!;
    assert.is(settled.sessionId, '3f9c1a2b-7d4e-4f5a-9b6c-8d7e6f5a4b3c');
    assert.is(settled.isError, false);
  }),
);

// --- hangs after the final line ----------------------------------------------------------

test(
  'bin: claude-01 replayed, then the agent stays alive: torn down result_grace after its result, a success, lingered',
  withPlan(replayPlan('replay-linger', 'claude-stream-json', 'result_grace = "500ms"'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('claude-01-success-opus4.jsonl'), REPLAY_LINGER: '300' };
    const started = Date.now();
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 0, r.stderr);
    assert.ok(Date.now() - started < 40_000, 'not held to the 1m deadline');
    const { rs, type } = await receipt(f, 'replay-linger');
    assert.is(type, 'run-complete');
    const settled = ofType(rs, 'command-settled')[0]!;
    assert.is(settled.lingered, true);
    assert.match(settled.warnings.join('\n'), /result_grace/);
    // Said on the progress line too: a kill by signal that is not the agent's failure.
    assert.match(
      r.stderr,
      /command-settled r1 #1: signaled exit=null \d+ms \(stayed alive after its result line: torn down, result_grace\)/,
    );
    assert.is(settled.sessionId, 'acc21b20-13b3-423c-9191-01925b546d5b');
    assert.is(settled.costUsd, 0.2882215);
    assert.is(ofType(rs, 'attempt-closed')[0]!.reason, 'ok');
  }),
);

test(
  "bin: codex-03 replayed, then the agent stays alive: the failed turn's outcome, not timed_out",
  withPlan(replayPlan('replay-linger-codex', 'codex-json', 'result_grace = "500ms"'), { timeoutMs: 90_000 }, async (f) => {
    const env = { ...f.env, REPLAY_TRANSCRIPT: transcriptPath('codex-03-turn-failed-400-invalid-model-0.147.jsonl'), REPLAY_LINGER: '300' };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 1, r.stderr);
    const { rs } = await receipt(f, 'replay-linger-codex');
    const closed = ofType(rs, 'attempt-closed')[0]!;
    assert.is(closed.reason, 'agent_config_invalid', "the failed turn's outcome, not timed_out");
    assert.is(closed.class, 'environment');
    assert.is(ofType(rs, 'command-settled')[0]!.lingered, true);
  }),
);

test(
  'bin: output after the terminal line cancels result_grace (lines 400 ms apart, grace 1s, 2s of them): not lingered',
  withPlan(replayPlan('replay-more', 'codex-json', 'result_grace = "1s"'), { timeoutMs: 90_000 }, async (f) => {
    const dir = tempDir('replay-more-');
    cleanups.push(dir.cleanup);
    const file = join(dir.path, 'more.jsonl');
    const more = '{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"stub done"}}\n';
    writeFileSync(file, readFileSync(transcriptPath('codex-07-reconnect-then-success.jsonl'), 'utf8') + more.repeat(5));
    const env = { ...f.env, REPLAY_TRANSCRIPT: file, REPLAY_DELAY: '0.4' };
    const r = await runplan(['run', f.plan], { ...f, env });
    assert.is(r.exitCode, 0, r.stderr);
    const settled = ofType(await records(f.repo, 'replay-more'), 'command-settled')[0]!;
    assert.is(settled.lingered, undefined, 'the agent exited on its own');
    assert.is(settled.reason, 'exited');
    assert.is(settled.exitCode, 0);
  }),
);

test(
  'bin: validate refuses result_grace = "0" (it must be longer than 0)',
  withPlan(replayPlan('replay-grace0', 'codex-json', 'result_grace = "0"'), {}, async (f) => {
    const r = await runplan(['validate', f.plan], f);
    assert.is(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /defaults\.result_grace/);
  }),
);

test.run();
