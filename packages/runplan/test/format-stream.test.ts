// The interpreters through settle.stream with the real-format mock agent (test-fixtures).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { stream } from '@runplan/settle';
import { agentsPath, envWithAgents, withTimeout } from '@runplan/test-fixtures';
import { agentConsumer, initialAgentState, interpretTranscript, totalTokens } from '../src/agent/consumer.js';
import type { AgentFormat } from '../src/plan/types.js';

async function runAgent(format: AgentFormat, prompt: string | Buffer, agent = 'mock-agent') {
  const chunks: Buffer[] = [];
  const transcript = new PassThrough();
  transcript.on('data', (c: Buffer) => chunks.push(c));
  const result = await stream(
    {
      argv: [join(agentsPath(), agent), 't1', '1'],
      input: prompt,
      baseEnv: envWithAgents(),
      stderr: 'ignore',
      deadlineMs: 30_000,
      graceMs: 1000,
    },
    initialAgentState(format),
    agentConsumer(format, { transcript }),
  );
  return { ...result, transcript: Buffer.concat(chunks).toString('utf8') };
}

test(
  'claude: result with two models in modelUsage; the transcript recounts the same',
  withTimeout(30_000, async () => {
    const { execution, state, transcript } = await runAgent(
      'claude-stream-json',
      'mock: usage 100 20 300 40 0.5\nmock: model-usage claude-haiku-4-5 7 3 0 5 0.25\nmock: result all done\n',
    );
    assert.is(execution.exitCode, 0);
    assert.ok(state);
    assert.is(state.sawResult, true);
    assert.equal(state.usage, { inputTokens: 107, outputTokens: 23, cacheReadTokens: 300, cacheCreationTokens: 45 });
    assert.is(state.costUsd, 0.75);
    assert.is(state.finalMessage, 'all done');
    assert.is(state.isError, false);
    assert.ok(state.sessionId);
    const again = interpretTranscript('claude-stream-json', transcript);
    assert.equal(again.usage, state.usage);
    assert.is(again.costUsd, state.costUsd);
  }),
);

test(
  'codex: turn.completed is the running total, the last snapshot counts, cached input counted once',
  withTimeout(30_000, async () => {
    const { state } = await runAgent('codex-json', 'mock: format codex\nmock: usage 100 20 30 0\nmock: turn\nmock: usage 50 5 10 0\n');
    assert.ok(state);
    assert.equal(state.usage, { inputTokens: 150, outputTokens: 25, cacheReadTokens: 40, cacheCreationTokens: 0 });
    assert.is(totalTokens(state.usage), 215);
    assert.is(state.costUsd, undefined);
    assert.ok(state.sessionId);
  }),
);

test(
  'usage survives EPIPE on a 1 MiB prompt the agent never reads',
  withTimeout(30_000, async () => {
    const prompt = Buffer.alloc(1024 * 1024, 'p');
    const { execution, state } = await runAgent('claude-stream-json', prompt, 'mock-agent-close-stdin');
    assert.is(execution.error?.code, 'EPIPE', JSON.stringify(execution.error));
    assert.ok(state, 'state recovered after the transport failure');
    assert.is(state.sawResult, true);
    assert.is(totalTokens(state.usage), 120, 'default usage 100 in + 20 out, counted once');
  }),
);

test(
  'is_error with exit 0, rate limit with a reset, blocked: all from the real agent lines',
  withTimeout(30_000, async () => {
    const isError = await runAgent('claude-stream-json', 'mock: is-error the tests would not compile\n');
    assert.is(isError.execution.exitCode, 0);
    assert.is(isError.state?.isError, true);
    assert.match(isError.state?.errorMessage ?? '', 'would not compile');
    const limited = await runAgent('claude-stream-json', 'mock: rate-limit 1784283600\n');
    assert.is(limited.state?.providerLimited, true);
    assert.is(limited.state?.resetAtMs, 1784283600_000);
    const plain429 = await runAgent('claude-stream-json', 'mock: rate-limit\n');
    assert.is(plain429.state?.providerLimited, true);
    const codex429 = await runAgent('codex-json', 'mock: format codex\nmock: rate-limit\n');
    assert.is(codex429.state?.providerLimited, true);
    assert.is(codex429.state?.isError, true);
    for (const format of ['claude', 'codex', 'text'] as const) {
      const name: AgentFormat = format === 'claude' ? 'claude-stream-json' : format === 'codex' ? 'codex-json' : 'text';
      const blocked = await runAgent(name, `mock: format ${format}\nmock: blocked need the staging password\n`);
      assert.is(blocked.state?.blocked, 'need the staging password', format);
    }
  }),
);

test(
  'no result line: usage from assistant messages, deduplicated by id',
  withTimeout(30_000, async () => {
    const { state } = await runAgent('claude-stream-json', 'mock: usage 10 2 0 0\nmock: turn\nmock: usage 5 1 0 0\nmock: no-result\n');
    assert.ok(state);
    assert.is(state.sawResult, false);
    assert.equal(state.usage, { inputTokens: 15, outputTokens: 3, cacheReadTokens: 0, cacheCreationTokens: 0 });
  }),
);

test.run();
