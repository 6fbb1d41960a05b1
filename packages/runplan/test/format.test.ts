import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough, Readable, Writable } from 'node:stream';
import { withTimeout } from '@runplan/test-fixtures';
import { agentConsumer, initialAgentState, interpretTranscript, totalTokens, FINAL_MESSAGE_BYTES } from '../src/agent/consumer.js';
import type { AgentState } from '../src/agent/consumer.js';
import type { AgentFormat } from '../src/plan/types.js';

// Real-shaped lines of `claude -p --output-format stream-json --verbose`.
const claudeInit = JSON.stringify({ type: 'system', subtype: 'init', session_id: 'sess-1', model: 'claude-sonnet-4-5', tools: [] });
const claudeAssistant = (id: string, text: string, usage: Record<string, number>): string =>
  JSON.stringify({
    type: 'assistant',
    message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text }], usage },
    parent_tool_use_id: null,
    session_id: 'sess-1',
  });
const claudeResult = JSON.stringify({
  type: 'result',
  subtype: 'success',
  is_error: false,
  duration_ms: 12034,
  num_turns: 4,
  result: 'Done: added the migration.',
  session_id: 'sess-1',
  total_cost_usd: 0.1234,
  usage: { input_tokens: 9, cache_creation_input_tokens: 100, cache_read_input_tokens: 200, output_tokens: 50 },
  modelUsage: {
    'claude-sonnet-4-5': {
      inputTokens: 10,
      outputTokens: 500,
      cacheReadInputTokens: 2000,
      cacheCreationInputTokens: 300,
      webSearchRequests: 0,
      costUSD: 0.1,
    },
    'claude-haiku-4-5': {
      inputTokens: 5,
      outputTokens: 40,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 60,
      webSearchRequests: 0,
      costUSD: 0.0234,
    },
  },
});

async function consume(
  format: AgentFormat,
  chunks: (string | Buffer)[],
  transcript?: Writable,
): Promise<{ state: AgentState; result: void | Error }> {
  const state = initialAgentState(format);
  const stdout = Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));
  const result = await agentConsumer(format, transcript ? { transcript } : {})(stdout, state);
  return { state, result };
}

test(
  'claude: the result line is authoritative, modelUsage summed across models',
  withTimeout(5000, async () => {
    const { state, result } = await consume('claude-stream-json', [
      [claudeInit, claudeAssistant('msg_1', 'Working on it', { input_tokens: 3, output_tokens: 7 }), claudeResult].join('\n') + '\n',
    ]);
    assert.is(result, undefined);
    assert.is(state.sessionId, 'sess-1');
    assert.equal(state.usage, { inputTokens: 15, outputTokens: 540, cacheReadTokens: 2000, cacheCreationTokens: 360 });
    assert.is(state.costUsd, 0.1234);
    assert.is(state.finalMessage, 'Done: added the migration.');
    assert.is(state.isError, false);
    assert.is(state.sawResult, true);
    assert.is(state.lines, 3);
    assert.is(totalTokens(state.usage), 2915);
  }),
);

test('claude: result without modelUsage falls back to its usage', () => {
  const line = JSON.stringify({ ...JSON.parse(claudeResult), modelUsage: undefined });
  const state = interpretTranscript('claude-stream-json', line + '\n');
  assert.equal(state.usage, { inputTokens: 9, outputTokens: 50, cacheReadTokens: 200, cacheCreationTokens: 100 });
});

test('claude: without a result line, assistant usage is recovered once per message id', () => {
  const text = [
    claudeInit,
    claudeAssistant('msg_1', 'first block', {
      input_tokens: 4,
      output_tokens: 10,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
    }),
    claudeAssistant('msg_1', 'second block of the same message', {
      input_tokens: 4,
      output_tokens: 10,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
    }),
    claudeAssistant('msg_2', 'last words', { input_tokens: 1, output_tokens: 2 }),
  ].join('\n');
  const state = interpretTranscript('claude-stream-json', text);
  assert.equal(state.usage, { inputTokens: 5, outputTokens: 12, cacheReadTokens: 100, cacheCreationTokens: 20 });
  assert.is(state.sawResult, false);
  assert.is(state.costUsd, undefined);
  assert.is(state.finalMessage, 'last words');
  assert.ok(state.warnings.some((w) => w.includes('no result line')));
});

test('claude: assistant usage never adds to a result line', () => {
  const state = interpretTranscript(
    'claude-stream-json',
    [claudeResult, claudeAssistant('msg_9', 'late', { input_tokens: 1000, output_tokens: 1000 })].join('\n'),
  );
  assert.is(totalTokens(state.usage), 2915);
});

test('claude: is_error or an error subtype fails whatever the exit code', () => {
  const isError = interpretTranscript(
    'claude-stream-json',
    JSON.stringify({ type: 'result', subtype: 'success', is_error: true, result: 'Something broke', total_cost_usd: 0.01 }),
  );
  assert.is(isError.isError, true);
  assert.match(isError.errorMessage ?? '', 'Something broke');
  assert.is(isError.providerLimited, false);
  const maxTurns = interpretTranscript(
    'claude-stream-json',
    JSON.stringify({
      type: 'result',
      subtype: 'error_max_turns',
      is_error: false,
      total_cost_usd: 0.5,
      usage: { input_tokens: 1, output_tokens: 1 },
    }),
  );
  assert.is(maxTurns.isError, true);
  assert.match(maxTurns.errorMessage ?? '', 'error_max_turns');
  assert.is(maxTurns.costUsd, 0.5);
  const during = interpretTranscript(
    'claude-stream-json',
    JSON.stringify({ type: 'result', subtype: 'error_during_execution', is_error: true, errors: ['tool crashed'] }),
  );
  assert.match(during.errorMessage ?? '', 'tool crashed');
});

test('claude: rate limit and overload are provider limits, with the reported reset', () => {
  const usageLimit = interpretTranscript(
    'claude-stream-json',
    JSON.stringify({ type: 'result', subtype: 'success', is_error: true, result: 'Claude AI usage limit reached|1761606000' }),
  );
  assert.is(usageLimit.providerLimited, true);
  assert.is(usageLimit.resetAtMs, 1761606000_000);
  const overloaded = interpretTranscript(
    'claude-stream-json',
    JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: true,
      result: 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    }),
  );
  assert.is(overloaded.providerLimited, true);
  assert.is(overloaded.resetAtMs, undefined);
  const rejected = interpretTranscript(
    'claude-stream-json',
    JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1784283600, rateLimitType: 'five_hour' } }),
  );
  assert.is(rejected.providerLimited, true);
  assert.is(rejected.resetAtMs, 1784283600_000);
});

test('claude: an informational rate_limit_event or prose about rate limits is not a limit', () => {
  const state = interpretTranscript(
    'claude-stream-json',
    [
      JSON.stringify({
        type: 'rate_limit_event',
        rate_limit_info: { status: 'allowed', resetsAt: 1784283600, overageStatus: 'rejected', isUsingOverage: false },
      }),
      JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'allowed_warning', resetsAt: 1784283600 } }),
      claudeAssistant('msg_1', 'I added a rate limit (429) handler.', { input_tokens: 1, output_tokens: 1 }),
      claudeResult,
    ].join('\n'),
  );
  assert.is(state.providerLimited, false);
  assert.is(state.isError, false);
});

test('blocked: RUNPLAN: BLOCKED in assistant text, result text, plain lines and text format', () => {
  const inAssistant = interpretTranscript(
    'claude-stream-json',
    claudeAssistant('m', 'I tried.\nRUNPLAN: BLOCKED need the staging credentials\n', { input_tokens: 1 }),
  );
  assert.is(inAssistant.blocked, 'need the staging credentials');
  const inResult = interpretTranscript(
    'claude-stream-json',
    JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'RUNPLAN: BLOCKED schema unclear' }),
  );
  assert.is(inResult.blocked, 'schema unclear');
  const plain = interpretTranscript('claude-stream-json', `${claudeInit}\nRUNPLAN: BLOCKED raw line\n${claudeResult}\n`);
  assert.is(plain.blocked, 'raw line');
  const text = interpretTranscript('text', 'working\nRUNPLAN: BLOCKED   disk quota   \nbye\n');
  assert.is(text.blocked, 'disk quota');
  assert.is(text.finalMessage, 'bye');
  const codex = interpretTranscript(
    'codex-json',
    JSON.stringify({ type: 'item.completed', item: { id: 'item_3', type: 'agent_message', text: 'RUNPLAN: BLOCKED no access' } }),
  );
  assert.is(codex.blocked, 'no access');
});

test('blocked: the marker quoted in a tool result or mid-line does not count', () => {
  const toolResult = JSON.stringify({
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', content: 'RUNPLAN: BLOCKED from the prompt file' }] },
  });
  assert.is(interpretTranscript('claude-stream-json', toolResult).blocked, undefined);
  assert.is(interpretTranscript('text', 'say "RUNPLAN: BLOCKED x" when blocked\n').blocked, undefined);
});

test('codex: session, turn.completed usage is the running total (the last counts), final agent message, no cost', () => {
  const text = [
    JSON.stringify({ type: 'thread.started', thread_id: '0199a213-81c0-7800-8aa1-bbab2a035a53' }),
    JSON.stringify({ type: 'turn.started' }),
    JSON.stringify({ type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: '**Thinking**' } }),
    JSON.stringify({
      type: 'item.completed',
      item: {
        id: 'item_1',
        type: 'command_execution',
        command: 'ls',
        aggregated_output: 'RUNPLAN: BLOCKED in a file',
        exit_code: 0,
        status: 'completed',
      },
    }),
    JSON.stringify({ type: 'item.completed', item: { id: 'item_2', type: 'agent_message', text: 'First answer' } }),
    JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 1200, cached_input_tokens: 200, output_tokens: 345 } }),
    JSON.stringify({ type: 'turn.started' }),
    JSON.stringify({ type: 'item.completed', item: { id: 'item_3', type: 'agent_message', text: 'Final answer' } }),
    // The thread's running total (codex-rs usage_from_last_total): 1200+800 in, 200+700 cached, 345+55 out.
    JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 2000, cached_input_tokens: 900, output_tokens: 400 } }),
  ].join('\n');
  const state = interpretTranscript('codex-json', text);
  assert.is(state.sessionId, '0199a213-81c0-7800-8aa1-bbab2a035a53');
  assert.equal(state.usage, { inputTokens: 1100, cacheReadTokens: 900, outputTokens: 400, cacheCreationTokens: 0 });
  assert.is(totalTokens(state.usage), 2400);
  assert.is(state.costUsd, undefined);
  assert.is(state.finalMessage, 'Final answer');
  assert.is(state.blocked, undefined);
  assert.is(state.isError, false);
});

test('codex: turn.failed and a final error fail the attempt; a recovered error does not', () => {
  const failed = interpretTranscript('codex-json', JSON.stringify({ type: 'turn.failed', error: { message: 'model refused' } }));
  assert.is(failed.isError, true);
  assert.is(failed.errorMessage, 'model refused');
  const lastError = interpretTranscript(
    'codex-json',
    JSON.stringify({ type: 'error', message: 'exceeded retry limit, last status: 429 Too Many Requests' }),
  );
  assert.is(lastError.isError, true);
  assert.is(lastError.providerLimited, true);
  const recovered = interpretTranscript(
    'codex-json',
    [
      JSON.stringify({ type: 'error', message: 'Reconnecting... 1/5' }),
      JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 1 } }),
    ].join('\n'),
  );
  assert.is(recovered.isError, false);
  assert.ok(recovered.warnings.some((w) => w.includes('Reconnecting')));
});

test('text: nothing but the final line and blocked', () => {
  const state = interpretTranscript('text', 'one\n\ntwo\n   \n');
  assert.is(state.finalMessage, 'two');
  assert.equal(state.usage, { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 });
  assert.is(state.sessionId, undefined);
  assert.is(state.lines, 4);
});

test(
  'chunks split at every byte boundary of a multibyte line give the same state and transcript',
  withTimeout(20000, async () => {
    const message = 'Fertig — größer ✓ 日本語 🎉';
    const line = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: message,
      total_cost_usd: 0.5,
      usage: { input_tokens: 1, output_tokens: 2 },
    });
    const bytes = Buffer.from(`${claudeInit}\n${line}`, 'utf8');
    for (let cut = 1; cut < bytes.length; cut++) {
      const copied: Buffer[] = [];
      const transcript = new Writable({
        write(chunk: Buffer, _enc, cb) {
          copied.push(chunk);
          cb();
        },
      });
      const { state, result } = await consume('claude-stream-json', [bytes.subarray(0, cut), bytes.subarray(cut)], transcript);
      assert.is(result, undefined);
      assert.is(state.finalMessage, message, `cut at ${cut}`);
      assert.is(state.lines, 2);
      assert.ok(Buffer.concat(copied).equals(bytes), `transcript at cut ${cut}`);
    }
    // One byte at a time, too.
    const single = await consume(
      'claude-stream-json',
      [...bytes].map((b) => Buffer.from([b])),
    );
    assert.is(single.state.finalMessage, message);
  }),
);

test(
  'a read error comes back as an Error with the state interpreted so far',
  withTimeout(5000, async () => {
    const stdout = new PassThrough();
    const state = initialAgentState('claude-stream-json');
    const done = agentConsumer('claude-stream-json')(stdout, state);
    stdout.write(claudeAssistant('msg_1', 'partial', { input_tokens: 7, output_tokens: 3 }) + '\n');
    await new Promise((r) => setImmediate(r));
    stdout.destroy(Object.assign(new Error('read EIO'), { code: 'EIO' }));
    const result = await done;
    assert.instance(result, Error);
    assert.is((result as Error).message, 'read EIO');
    assert.is(state.usage.inputTokens, 7);
  }),
);

test(
  'a failing transcript is reported, stdout is still drained and interpreted',
  withTimeout(5000, async () => {
    const transcript = new Writable({
      write(_c, _e, cb) {
        cb(new Error('ENOSPC: no space left'));
      },
    });
    const { state, result } = await consume('claude-stream-json', [claudeInit + '\n', claudeResult + '\n']);
    assert.is(result, undefined);
    const broken = await consume('claude-stream-json', [claudeInit + '\n', claudeResult + '\n'], transcript);
    assert.instance(broken.result, Error);
    assert.match((broken.result as Error).message, 'ENOSPC');
    assert.equal(broken.state.usage, state.usage);
    assert.ok(broken.state.warnings.some((w) => w.includes('transcript')));
  }),
);

test('the final message is bounded, keeping its tail', () => {
  const long = 'x'.repeat(FINAL_MESSAGE_BYTES * 2) + 'THE END';
  const state = interpretTranscript('text', long);
  assert.ok(Buffer.byteLength(state.finalMessage ?? '') <= FINAL_MESSAGE_BYTES + 3);
  assert.ok(state.finalMessage?.endsWith('THE END'));
});

test('garbage lines are warnings, never failures', () => {
  const state = interpretTranscript(
    'claude-stream-json',
    `not json\n{"type":"assistant","message":{"content":[{"type":"text","text":"ok{"type":"rate_limit_event"}\n${claudeResult}\n`,
  );
  assert.is(state.isError, false);
  assert.is(state.sawResult, true);
  assert.is(state.warnings.filter((w) => w.includes('not JSON')).length, 2);
});

test.run();
