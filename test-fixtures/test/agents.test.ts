import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  agentsPath,
  envWithAgents,
  gateCounts,
  gitRepo,
  parseJsonLines,
  readGateEnv,
  readLedger,
  readPids,
  runBin,
  savedPrompts,
  tempDir,
  withTimeout,
} from '../src/index.js';

const agent = join(agentsPath(), 'mock-agent');
type Json = Record<string, any>;

// Runs mock-agent TASK ATTEMPT with `prompt` on stdin in `cwd`.
async function runAgent(
  prompt: string,
  opts: { task?: string; attempt?: number; cwd?: string; env?: Record<string, string | undefined> } = {},
) {
  const dir = opts.cwd === undefined ? tempDir('mock-agent-') : undefined;
  try {
    return await runBin(agent, [opts.task ?? 't1', String(opts.attempt ?? 1)], {
      cwd: opts.cwd ?? dir!.path,
      env: envWithAgents(opts.env ?? {}),
      input: prompt,
      timeoutMs: 60_000,
    });
  } finally {
    dir?.cleanup();
  }
}

const lines = (stdout: string): Json[] => parseJsonLines(stdout) as Json[];

test(
  'claude stream-json by default: init, assistant with id and usage, one success result',
  withTimeout(60_000, async () => {
    const r = await runAgent('Do the thing.\nmock: usage 1000 200 3000 400 0.02\n');
    assert.is(r.exitCode, 0);
    const out = lines(r.stdout);
    const init = out[0]!;
    assert.is(init.type, 'system');
    assert.is(init.subtype, 'init');
    assert.type(init.session_id, 'string');
    const assistants = out.filter((l) => l.type === 'assistant');
    assert.ok(assistants.length >= 1);
    for (const a of assistants) {
      assert.match(a.message.id, /^msg_/);
      assert.type(a.message.usage.input_tokens, 'number');
      assert.is(a.session_id, init.session_id);
    }
    const results = out.filter((l) => l.type === 'result');
    assert.is(results.length, 1);
    const result = results[0]!;
    assert.is(out.at(-1), result);
    assert.is(result.subtype, 'success');
    assert.is(result.is_error, false);
    assert.is(result.total_cost_usd, 0.02);
    assert.is(result.session_id, init.session_id);
    assert.equal(
      [
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.usage.cache_read_input_tokens,
        result.usage.cache_creation_input_tokens,
      ],
      [1000, 200, 3000, 400],
    );
    const model = result.modelUsage['claude-sonnet-4-5-20250929'];
    assert.equal(
      [model.inputTokens, model.outputTokens, model.cacheReadInputTokens, model.cacheCreationInputTokens, model.costUSD],
      [1000, 200, 3000, 400, 0.02],
    );
    assert.is(result.result, 'Done: t1 attempt 1.');
  }),
);

test(
  'one message is printed once per content block with the same id and usage (dedupe by id)',
  withTimeout(60_000, async () => {
    const r = await runAgent('mock: usage 10 5 0 0 0.001\nmock: turn\nmock: usage 20 7 1 2 0.002\n');
    const out = lines(r.stdout);
    const byId = new Map<string, Json>();
    for (const a of out.filter((l) => l.type === 'assistant')) {
      const seen = byId.get(a.message.id);
      if (seen) assert.equal(seen.message.usage, a.message.usage);
      byId.set(a.message.id, a);
    }
    const assistantLines = out.filter((l) => l.type === 'assistant').length;
    assert.ok(assistantLines > byId.size, 'some message id repeats');
    const summed = [...byId.values()].reduce((n, a) => n + a.message.usage.input_tokens + a.message.usage.output_tokens, 0);
    assert.is(summed, 10 + 5 + 20 + 7);
    const result = out.at(-1)!;
    assert.is(result.num_turns, 2);
    assert.equal(
      [
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.usage.cache_read_input_tokens,
        result.usage.cache_creation_input_tokens,
      ],
      [30, 12, 1, 2],
    );
    assert.is(result.total_cost_usd, 0.003);
  }),
);

test(
  'model-usage adds a second model to modelUsage and its cost to total_cost_usd',
  withTimeout(60_000, async () => {
    const r = await runAgent('mock: usage 1000 200 3000 400 0.02\nmock: model-usage claude-haiku-4-5 50 10 0 0 0.001\n');
    const result = lines(r.stdout).at(-1)!;
    const models = Object.values(result.modelUsage) as Json[];
    assert.is(models.length, 2);
    const sum = (k: string) => models.reduce((n, m) => n + (m[k] as number), 0);
    assert.equal(
      [sum('inputTokens'), sum('outputTokens'), sum('cacheReadInputTokens'), sum('cacheCreationInputTokens')],
      [1050, 210, 3000, 400],
    );
    assert.is(result.total_cost_usd, 0.021);
    assert.is(result.usage.input_tokens, 1000, 'usage stays the main model');
  }),
);

test(
  'no-result leaves only assistant lines; say adds zero-usage messages',
  withTimeout(60_000, async () => {
    const r = await runAgent('mock: say looking\nmock: no-result\nmock: usage 7 3 0 0\n');
    const out = lines(r.stdout);
    assert.not.ok(out.some((l) => l.type === 'result'));
    const say = out.find((l) => l.type === 'assistant' && l.message.content[0].text === 'looking');
    assert.ok(say);
    assert.is(say!.message.usage.output_tokens, 0);
  }),
);

test(
  'is-error: is_error true with subtype error_during_execution, exit code still 0',
  withTimeout(60_000, async () => {
    const r = await runAgent('mock: is-error tool failed\n');
    assert.is(r.exitCode, 0);
    const result = lines(r.stdout).at(-1)!;
    assert.is(result.type, 'result');
    assert.is(result.is_error, true);
    assert.is(result.subtype, 'error_during_execution');
    assert.is(result.result, 'tool failed');
  }),
);

test(
  'rate-limit: an error result naming 429 / the limit, exit 1; with a reset time a rate_limit_event',
  withTimeout(60_000, async () => {
    const r = await runAgent('mock: rate-limit\nmock: write never.txt x\n');
    assert.is(r.exitCode, 1);
    const out = lines(r.stdout);
    const result = out.at(-1)!;
    assert.is(result.is_error, true);
    assert.match(result.result, /429/);
    assert.match(result.result, /rate_limit/);
    assert.ok(out.some((l) => l.type === 'assistant' && l.error === 'rate_limit'));
    assert.match(r.stderr, /429/);

    const reset = await runAgent('mock: rate-limit 1900000000\n');
    assert.is(reset.exitCode, 1);
    const event = lines(reset.stdout).find((l) => l.type === 'rate_limit_event')!;
    assert.equal(event.rate_limit_info, { status: 'rejected', resetsAt: 1900000000, rateLimitType: 'five_hour' });
    assert.is(lines(reset.stdout).at(-1)!.result, 'Claude AI usage limit reached|1900000000');
  }),
);

test(
  "codex json: thread.started, turn.started, agent_message items, turn.completed usage as the thread's running total (as codex exec prints it)",
  withTimeout(60_000, async () => {
    const r = await runAgent('mock: format codex\nmock: usage 100 20 30 0\nmock: turn\nmock: usage 200 40 0 0\nmock: say hi\n');
    assert.is(r.exitCode, 0);
    const out = lines(r.stdout);
    assert.is(out[0]!.type, 'thread.started');
    assert.type(out[0]!.thread_id, 'string');
    assert.is(out[1]!.type, 'turn.started');
    const turns = out.filter((l) => l.type === 'turn.completed');
    assert.equal(
      turns.map((t) => t.usage),
      [
        { input_tokens: 130, cached_input_tokens: 30, output_tokens: 20 },
        { input_tokens: 330, cached_input_tokens: 30, output_tokens: 60 },
      ],
    );
    const messages = out.filter((l) => l.type === 'item.completed' && l.item.type === 'agent_message').map((l) => l.item.text);
    assert.equal(messages, ['hi', 'Done: t1 attempt 1.']);
    assert.is(out.at(-1)!.type, 'turn.completed');
  }),
);

test(
  'codex failures: is-error → turn.failed; rate-limit → error + turn.failed with 429, exit 1',
  withTimeout(60_000, async () => {
    const failed = await runAgent('mock: format codex-json\nmock: is-error model refused\n');
    const last = lines(failed.stdout).at(-1)!;
    assert.is(last.type, 'turn.failed');
    assert.is(last.error.message, 'model refused');
    assert.not.ok(lines(failed.stdout).some((l) => l.type === 'turn.completed'));

    const limited = await runAgent('mock: format codex\nmock: rate-limit\n');
    assert.is(limited.exitCode, 1);
    const out = lines(limited.stdout);
    assert.match(out.find((l) => l.type === 'error')!.message, /429/);
    assert.match(out.at(-1)!.error.message, /Too Many Requests/);
  }),
);

test(
  'text format prints plain lines; blocked prints the RUNPLAN: BLOCKED line',
  withTimeout(60_000, async () => {
    const r = await runAgent('mock: format text\nmock: say step one\nmock: blocked need credentials for prod\n');
    assert.is(r.exitCode, 0);
    const text = r.stdout.split('\n');
    assert.is(text[0], 'step one');
    assert.ok(text.includes('RUNPLAN: BLOCKED need credentials for prod'));
    assert.is(r.stdout.trim().split('\n').at(-1), 'RUNPLAN: BLOCKED need credentials for prod');
  }),
);

test(
  'blocked in stream-json: the final result text is the BLOCKED line',
  withTimeout(60_000, async () => {
    const r = await runAgent('mock: blocked waiting for API key\nmock: exit 42\n');
    assert.is(r.exitCode, 42);
    assert.is(lines(r.stdout).at(-1)!.result, 'RUNPLAN: BLOCKED waiting for API key');
  }),
);

test(
  'the ledger line is written first, with the real pid, even when the prompt is bad',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const ledger = join(dir.path, 'ledger');
      const ok = await runAgent('mock: say hi\n', { task: 'alpha', attempt: 2, env: { MOCK_LEDGER: ledger } });
      const bad = await runAgent('mock: frobnicate\n', { task: 'beta', attempt: 1, env: { MOCK_LEDGER: ledger } });
      assert.is(bad.exitCode, 2);
      assert.match(bad.stderr, /mock-agent: unknown directive: frobnicate/);
      assert.equal(readLedger(ledger), [
        { task: 'alpha', attempt: 2, pid: ok.pid },
        { task: 'beta', attempt: 1, pid: bad.pid },
      ]);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'fail-first K fails attempts 1..K with a stderr line (a word, no digit) and exit 1, then succeeds',
  withTimeout(60_000, async () => {
    const prompt = 'mock: fail-first 2\nmock: result made it\n';
    const one = await runAgent(prompt, { attempt: 1 });
    const two = await runAgent(prompt, { attempt: 2 });
    const three = await runAgent(prompt, { attempt: 3 });
    assert.equal([one.exitCode, two.exitCode, three.exitCode], [1, 1, 0]);
    assert.is(one.stderr, 'mock-agent: fail-first 2: the first attempt fails\n');
    assert.is(two.stderr, 'mock-agent: fail-first 2: the second attempt fails\n');
    assert.is(three.stderr, '');
    assert.is(lines(one.stdout).at(-1)!.type, 'result', 'closing lines printed on failure too');
    assert.is(lines(three.stdout).at(-1)!.result, 'made it');
  }),
);

test(
  'exit N, stderr, attempt conditionals and text expansion',
  withTimeout(60_000, async () => {
    const prompt = [
      'mock: on-attempt 1 stderr first @TASK@/@ATTEMPT@',
      'mock: from-attempt 2 stderr later @TASK@/@ATTEMPT@',
      'mock: until-attempt 1 exit 7',
      'mock: stderr at @NOW@ in @TMP@ id @NONCE@',
      'mock: exit 3',
    ].join('\n');
    const one = await runAgent(prompt, { task: 'ex', attempt: 1 });
    assert.is(one.exitCode, 7);
    assert.is(one.stderr, 'first ex/1\n');
    const two = await runAgent(prompt, { task: 'ex', attempt: 2 });
    const three = await runAgent(prompt, { task: 'ex', attempt: 3 });
    assert.is(two.exitCode, 3);
    const noisy = /^later ex\/\d\nat \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z in \/.*\/mock-[0-9a-f]{16} id [0-9a-f]{16}\n$/;
    assert.match(two.stderr, noisy);
    assert.match(three.stderr, noisy);
    assert.is.not(two.stderr.split('\n')[1], three.stderr.split('\n')[1]);
  }),
);

test(
  'malformed directives exit 2 naming the problem',
  withTimeout(60_000, async () => {
    for (const [prompt, message] of [
      ['mock: sleep soon', /sleep: not a number/],
      ['mock: exit x', /exit: not a whole number/],
      ['mock: usage 1 2', /usage: wants/],
      ['mock: format yaml', /unknown format/],
      ['mock: env-to f.txt bad-name', /not a variable name/],
    ] as const) {
      const r = await runAgent(`${prompt}\n`);
      assert.is(r.exitCode, 2, prompt);
      assert.match(r.stderr, message);
    }
  }),
);

test(
  'write, put, rm and commit change a real repo; commit with nothing staged is a no-op',
  withTimeout(60_000, async () => {
    const repo = gitRepo();
    try {
      const before = repo.head()!;
      const r = await runAgent(
        'mock: write out/a.txt line one\nmock: write out/a.txt line two\nmock: put out/b.txt only\nmock: put out/b.txt replaced\nmock: write gone.txt x\nmock: rm gone.txt\nmock: commit agent: two files\n',
        { cwd: repo.path },
      );
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(repo.git(['rev-parse', 'HEAD~1']), before);
      assert.is(repo.git(['log', '-1', '--format=%s']), 'agent: two files');
      assert.is(repo.fileAt('HEAD', 'out/a.txt'), 'line one\nline two\n');
      assert.is(repo.fileAt('HEAD', 'out/b.txt'), 'replaced\n');
      assert.is(repo.fileAt('HEAD', 'gone.txt'), undefined);
      assert.is(repo.git(['status', '--porcelain']), '');
      lines(r.stdout); // git's chatter never reaches stdout

      const head = repo.head();
      const noop = await runAgent('mock: commit nothing here\n', { cwd: repo.path });
      assert.is(noop.exitCode, 0);
      assert.match(noop.stderr, /nothing to commit/);
      assert.is(repo.head(), head);

      const left = await runAgent('mock: write out/left.txt for runplan\n', { cwd: repo.path });
      assert.is(left.exitCode, 0);
      assert.is(repo.git(['status', '--porcelain']), '?? out/left.txt');
    } finally {
      repo.cleanup();
    }
  }),
);

test(
  'until-file grows one line per round; mock-verify fails until N lines, then passes',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const gateLedger = join(dir.path, 'gates');
      const env = { MOCK_GATE_LEDGER: gateLedger };
      const verify = () => runBin(join(agentsPath(), 'mock-verify'), ['rounds.txt', '3'], { cwd: dir.path, env: envWithAgents(env) });
      const first = await verify();
      assert.is(first.exitCode, 1);
      assert.is(first.stdout, 'mock-verify: rounds.txt has 0 of 3 lines: fail\n');
      const results: (number | null)[] = [];
      for (let round = 1; round <= 4; round++) {
        await runAgent('mock: until-file rounds.txt 3\n', { cwd: dir.path });
        results.push((await verify()).exitCode);
      }
      assert.equal(results, [1, 1, 0, 0]);
      assert.is(readFileSync(join(dir.path, 'rounds.txt'), 'utf8'), 'round 1\nround 2\nround 3\n');
      assert.is(gateCounts(gateLedger).get('verify'), 5);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'mock-gate: exit code and text from args, path checks, labels in the gate ledger',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const gateLedger = join(dir.path, 'gates');
      const gate = (args: string[]) =>
        runBin(join(agentsPath(), 'mock-gate'), args, { cwd: dir.path, env: envWithAgents({ MOCK_GATE_LEDGER: gateLedger }) });
      writeFileSync(join(dir.path, 'here.txt'), 'x');
      const ok = await gate(['--label', 'g1', '--exists', 'here.txt', '--missing', 'absent.txt', '0', 'all', 'good']);
      assert.equal([ok.exitCode, ok.stdout], [0, 'all good\n']);
      const code = await gate(['--stderr', 'warned', '3']);
      assert.equal([code.exitCode, code.stderr], [3, 'warned\n']);
      const missing = await gate(['--label', 'g1', '--exists', 'absent.txt', '--missing', 'here.txt', '0']);
      assert.is(missing.exitCode, 1);
      assert.is(missing.stdout, 'mock-gate: missing absent.txt\nmock-gate: unexpected here.txt\n');
      const usage = await gate(['--frob']);
      assert.is(usage.exitCode, 2);
      assert.equal(
        gateCounts(gateLedger),
        new Map([
          ['g1', 2],
          ['gate', 1],
        ]),
      );
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'mock-gate --env records the environment a hook or gate got (value, or unset)',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'env');
      const gate = join(agentsPath(), 'mock-gate');
      await runBin(gate, ['--label', 'post_run', '--env', 'GREETING', '--env', 'SECRET_X', '0'], {
        env: envWithAgents({ MOCK_GATE_ENV: file, GREETING: 'a b=c', SECRET_X: undefined }),
      });
      assert.equal(readGateEnv(file), [
        { label: 'post_run', name: 'GREETING', value: 'a b=c' },
        { label: 'post_run', name: 'SECRET_X', value: undefined },
      ]);
      const printed = await runBin(gate, ['--env', 'GREETING', '0'], { env: envWithAgents({ GREETING: 'hi' }) });
      assert.is(printed.stdout, 'gate GREETING=hi\n');
      const bad = await runBin(gate, ['--env', 'not-a-name', '0'], { env: envWithAgents() });
      assert.is(bad.exitCode, 2);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'MOCK_PROMPTS saves every prompt in dispatch order; MOCK_DIRECTIVES run before the prompt',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const prompts = join(dir.path, 'prompts');
      await runAgent('first prompt\nmock: say one\n', { task: 'p', env: { MOCK_PROMPTS: prompts } });
      await runAgent('second prompt\n\n## Previous failure\nmock-agent: boom\n', { task: 'p', attempt: 2, env: { MOCK_PROMPTS: prompts } });
      assert.equal(savedPrompts(prompts, 'p'), [
        'first prompt\nmock: say one\n',
        'second prompt\n\n## Previous failure\nmock-agent: boom\n',
      ]);
      assert.equal(savedPrompts(prompts, 'other'), []);

      const r = await runAgent('mock: say from prompt\n', { env: { MOCK_DIRECTIVES: 'say from env\nmock: usage 1 2 3 4 0.5' } });
      const said = lines(r.stdout)
        .filter((l) => l.type === 'assistant' && l.message.content[0].type === 'text')
        .map((l) => l.message.content[0].text);
      assert.equal(said.slice(0, 2), ['from env', 'from prompt']);
      assert.is(lines(r.stdout).at(-1)!.total_cost_usd, 0.5);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'env-to and print-env report the environment the agent got',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const r = await runAgent('mock: env-to env.txt GREETING NOPE_UNSET\nmock: print-env GREETING\n', {
        cwd: dir.path,
        env: { GREETING: 'hi there', NOPE_UNSET: undefined },
      });
      assert.is(readFileSync(join(dir.path, 'env.txt'), 'utf8'), 'GREETING=hi there\nNOPE_UNSET unset\n');
      assert.is(r.stderr, 'GREETING=hi there\n');
      assert.ok(lines(r.stdout).some((l) => l.type === 'assistant' && l.message.content[0].text === 'GREETING=hi there'));
    } finally {
      dir.cleanup();
    }
  }),
);

// Writes `size` bytes of prompt to an agent and reports how the write ended.
function writeBigPrompt(bin: string, first: string, size: number, env: Record<string, string | undefined>) {
  return new Promise<{ writeError: string | undefined; exitCode: number | null; stdout: string }>((resolve, reject) => {
    const dir = tempDir();
    const child = spawn(bin, ['big', '1'], { cwd: dir.path, env: envWithAgents(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let writeError: string | undefined;
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.resume();
    child.stdin.on('error', (e: NodeJS.ErrnoException) => (writeError ??= e.code));
    child.on('error', reject);
    child.stdin.end(Buffer.concat([Buffer.from(first), Buffer.alloc(size - first.length, 'x')]));
    child.on('close', (exitCode) => {
      dir.cleanup();
      resolve({ writeError, exitCode, stdout: Buffer.concat(out).toString('utf8') });
    });
  });
}

test(
  'close-stdin: a 1 MiB prompt write fails with EPIPE while the agent still prints usage and exits 0',
  withTimeout(60_000, async () => {
    const MiB = 1 << 20;
    const byEnv = await writeBigPrompt(agent, 'filler\n', MiB, { MOCK_CLOSE_STDIN: '1', MOCK_DIRECTIVES: 'usage 11 7 5 3 0.002' });
    const byLine = await writeBigPrompt(agent, 'mock: close-stdin\nmock: usage 99 99 99 99 9\n', MiB, {
      MOCK_DIRECTIVES: 'usage 11 7 5 3 0.002',
    });
    const byScript = await writeBigPrompt(join(agentsPath(), 'mock-agent-close-stdin'), 'x\n', MiB, {
      MOCK_DIRECTIVES: 'usage 11 7 5 3 0.002',
    });
    for (const r of [byEnv, byLine, byScript]) {
      assert.is(r.writeError, 'EPIPE');
      assert.is(r.exitCode, 0);
      const result = lines(r.stdout).at(-1)!;
      assert.is(result.type, 'result');
      assert.equal(
        [
          result.usage.input_tokens,
          result.usage.output_tokens,
          result.usage.cache_read_input_tokens,
          result.usage.cache_creation_input_tokens,
        ],
        [11, 7, 5, 3],
      );
      assert.is(result.total_cost_usd, 0.002);
    }
  }),
);

// Alive = /proc/<pid>/stat exists and the process is not a zombie.
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function sessionOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
}

async function until(what: string, check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

test(
  'ignore-term: agent and detached grandchild survive SIGTERM; the grandchild holds stdout; SIGKILL ends both',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    const pidfile = join(dir.path, 'grandchild.pid');
    const pids = join(dir.path, 'pids');
    const child = spawn(agent, ['hang', '1'], {
      cwd: dir.path,
      env: envWithAgents({ MOCK_PIDS: pids, MOCK_GRANDCHILD_SECONDS: '120' }),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.resume();
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    child.stdin.end(`mock: ignore-term\nmock: grandchild ${pidfile}\nmock: say started\nmock: sleep 120\n`);
    const agentPid = child.pid!;
    let grandchild = 0;
    try {
      await until('the agent to say started', () => stdout.includes('"started"'));
      grandchild = Number(readFileSync(pidfile, 'utf8'));
      assert.equal(readPids(pids), [{ task: 'hang', attempt: 1, role: 'grandchild', pid: grandchild }]);
      assert.ok(isRunning(grandchild));
      assert.is.not(sessionOf(grandchild), sessionOf(agentPid), 'grandchild is in its own session');
      assert.is(readlinkSync(`/proc/${grandchild}/fd/1`), readlinkSync(`/proc/${agentPid}/fd/1`), 'grandchild holds the same stdout pipe');

      process.kill(-agentPid, 'SIGTERM');
      process.kill(grandchild, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(isRunning(agentPid), 'agent ignored TERM');
      assert.ok(isRunning(grandchild), 'grandchild ignored TERM');

      process.kill(-agentPid, 'SIGKILL');
      assert.is(await exited, 'SIGKILL');
      // stdout stays open while the grandchild lives: close arrives only after it is killed.
      let isClosed = false;
      void closed.then(() => (isClosed = true));
      await new Promise((r) => setTimeout(r, 200));
      assert.not.ok(isClosed, 'the grandchild still holds the pipe');
      process.kill(grandchild, 'SIGKILL');
      await closed;
      await until('the grandchild to die', () => !isRunning(grandchild));
    } finally {
      killQuietly(-agentPid, 'SIGKILL');
      if (grandchild > 0) killQuietly(grandchild, 'SIGKILL');
      dir.cleanup();
    }
  }),
);

test(
  'without ignore-term, SIGTERM to the group ends a sleeping agent',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    const child = spawn(agent, ['sleepy', '1'], { cwd: dir.path, env: envWithAgents(), stdio: ['pipe', 'pipe', 'ignore'], detached: true });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    child.stdin.end('mock: say sleeping\nmock: sleep 120\n');
    try {
      await until('the agent to say sleeping', () => stdout.includes('"sleeping"'));
      process.kill(-child.pid!, 'SIGTERM');
      assert.is(await exited, 'SIGTERM');
    } finally {
      killQuietly(-child.pid!, 'SIGKILL');
      dir.cleanup();
    }
  }),
);

test(
  'MOCK_HOLD holds the named task after its first line while the hold file exists',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    const holdFile = join(dir.path, 'hold');
    writeFileSync(holdFile, '');
    const ledger = join(dir.path, 'ledger');
    const env = { MOCK_HOLD: 't06,t07:1', MOCK_HOLD_FILE: holdFile, MOCK_LEDGER: ledger };
    try {
      const other = await runAgent('mock: say quick\n', { task: 't07', attempt: 2, env });
      assert.is(other.exitCode, 0, 'attempt 2 of t07 is not held');
      let settled = false;
      const held = runAgent('mock: say after hold\n', { task: 't07', attempt: 1, env }).finally(() => (settled = true));
      await until('the held agent to start', () => readLedger(ledger).length === 2);
      await new Promise((r) => setTimeout(r, 300));
      assert.not.ok(settled, 'still held');
      rmSync(holdFile);
      const r = await held;
      assert.is(r.exitCode, 0);
      assert.ok(r.stdout.includes('after hold'));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'the scripts are POSIX sh: dash runs them and parses every one',
  withTimeout(60_000, async () => {
    for (const name of ['mock-agent', 'mock-agent-close-stdin', 'mock-gate', 'mock-verify']) {
      const file = join(agentsPath(), name);
      assert.ok(readFileSync(file, 'utf8').startsWith('#!/bin/sh\n'), name);
      if (existsSync('/bin/dash')) {
        const r = await runBin('/bin/dash', ['-n', file]);
        assert.is(r.exitCode, 0, `${name}: ${r.stderr}`);
      }
    }
    if (existsSync('/bin/dash')) {
      const direct = await runBin('/bin/dash', [agent, 'd', '1'], { input: 'mock: format codex\nmock: say dash\n', env: envWithAgents() });
      assert.is(direct.exitCode, 0, direct.stderr);
      assert.is(lines(direct.stdout)[0]!.type, 'thread.started');
    }
  }),
);

test.run();
