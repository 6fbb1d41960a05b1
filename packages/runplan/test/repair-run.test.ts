import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts, readLedger, savedPrompts, tempDir, waitUntil, withTimeout } from '@runplan/test-fixtures';
import { ofType, records, runIds, runplan, setup, waitForEvent, withPlan } from './support.js';

async function receipt(f: ReturnType<typeof setup>, slug: string): Promise<{ type: string; data: Record<string, any> }> {
  const rs = await records(f.repo, slug);
  const terminal = rs.filter((r) => r.terminal === true);
  assert.is(terminal.length, 1);
  return { type: terminal[0]!.type, data: terminal[0]!.data as Record<string, any> };
}

test(
  'a task with no prompt: its retry gets no prompt either (stdin empty, as on its first attempt), never a race with EPIPE',
  withPlan(
    [
      'slug = "promptless"',
      'base = "main"',
      '[defaults]',
      // Attempt 1 fails; attempt 2 saves what its stdin held, and commits it.
      'command = ["sh", "-c", "cat > stdin.txt; if [ \\"$1\\" = 1 ]; then echo first-try-fails >&2; exit 3; fi", "sh", "{{run.attempt}}"]',
      'format = "text"',
      'deadline = "1m"',
      '[[tasks]]',
      'id = "plain"',
      'expect = "commit"',
    ].join('\n'),
    { timeoutMs: 90_000 },
    async (f) => {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      const closed = ofType(await records(f.repo, 'promptless'), 'attempt-closed').map((c) => c.outcome);
      assert.equal(closed, ['failed', 'success']);
      assert.is(f.repo.fileAt('runplan/promptless', 'stdin.txt'), '', 'the retry was handed nothing on stdin');
    },
  ),
);

test(
  'fail once, then succeed: 2 dispatches, complete; the second prompt carries the first failure',
  withTimeout(90_000, async () => {
    const prompts = tempDir('runplan-prompts-');
    const f = setup('fail-once', {}, { MOCK_PROMPTS: prompts.path });
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(dispatchCounts(f.ledger).get('flaky'), 2);
      const second = savedPrompts(prompts.path, 'flaky')[1]!;
      assert.match(second, /attempt 1 of this task failed/);
      assert.match(second, /class: task/);
      assert.match(second, /\| mock-agent: fail-first 1/);
      assert.is((await receipt(f, 'fail-once')).type, 'run-complete');
    } finally {
      f.cleanup();
      prompts.cleanup();
    }
  }),
);

test(
  'failures that differ only in timestamps, temp paths and ids are the same failure: 2 dispatches, repeated_failure',
  withTimeout(90_000, async () => {
    const f = setup('repeat-fail-noisy');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      assert.is(readLedger(f.ledger).length, 2);
      const { data } = await receipt(f, 'repeat-fail-noisy');
      assert.is(data.reason, 'repeated_failure');
      assert.is(data.class, 'task');
      assert.match(r.stderr, /repeated_failure: task noisy/);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'genuinely different failures are retried up to the cap (3 attempts)',
  withTimeout(120_000, async () => {
    const f = setup('different-fail');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      assert.is(readLedger(f.ledger).length, 3);
      const decided = ofType(await records(f.repo, 'different-fail'), 'repair-decided');
      assert.equal(
        decided.map((d) => d.action),
        ['retry', 'retry', 'stop'],
      );
      assert.is(decided[2]!.stopReason, 'cap_exhausted');
      assert.is(new Set(decided.map((d) => d.fingerprint)).size, 3);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'two different errors the agent reported on stdout (is_error, empty stderr) are different failures: retried, and the retry prompt names the error',
  withTimeout(120_000, async () => {
    const prompts = tempDir('runplan-prompts-');
    const f = setup(
      'is-error',
      {
        'mock: is-error tool execution failed halfway':
          'mock: on-attempt 1 is-error compile failed in src/alpha.ts\nmock: on-attempt 2 is-error tests failed in src/beta.ts',
        'task = 1': 'task = 3',
      },
      { MOCK_PROMPTS: prompts.path },
    );
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(readLedger(f.ledger).length, 3);
      const decided = ofType(await records(f.repo, 'is-error'), 'repair-decided');
      assert.equal(
        decided.map((d) => d.action),
        ['retry', 'retry'],
      );
      assert.is(new Set(decided.map((d) => d.fingerprint)).size, 2);
      const [, second, third] = savedPrompts(prompts.path, 'liar');
      assert.match(second!, /\| agent reported: error_during_execution: compile failed in src\/alpha\.ts/);
      assert.match(third!, /\| agent reported: error_during_execution: tests failed in src\/beta\.ts/);
    } finally {
      f.cleanup();
      prompts.cleanup();
    }
  }),
);

test(
  'RUNPLAN: BLOCKED ends the run with class needs_human, never retried',
  withTimeout(60_000, async () => {
    const f = setup('blocked');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      assert.is(readLedger(f.ledger).length, 1);
      const { data } = await receipt(f, 'blocked');
      assert.is(data.class, 'needs_human');
      assert.match(data.message, /need production database credentials/);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'a provider rate limit: backoff, then a retry that succeeds',
  withTimeout(60_000, async () => {
    const f = setup('rate-limit');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(readLedger(f.ledger).length, 2);
      const decided = ofType(await records(f.repo, 'rate-limit'), 'repair-decided');
      assert.is(decided[0]!.class, 'provider');
      assert.is(decided[0]!.changed, 'time');
      assert.is(decided[0]!.delayMs, 100);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'a provider reset more than 24.8 days away (within provider_max_wait) is waited for (no retry, no 1 ms timer loop) until the run is stopped',
  withTimeout(90_000, async () => {
    const resetAt = Math.floor(Date.now() / 1000) + 30 * 24 * 3600;
    const f = setup('rate-limit', {
      'on-attempt 1 rate-limit': `on-attempt 1 rate-limit ${resetAt}`,
      'backoff = "100ms"': 'backoff = "100ms"\nprovider_max_wait = "800h"',
    });
    try {
      const running = runplan(['run', f.plan], f, 80_000);
      await waitForEvent(f.repo, 'rate-limit', 'repair-decided');
      const decided = ofType(await records(f.repo, 'rate-limit'), 'repair-decided')[0]!;
      assert.ok(decided.delayMs > 2 ** 31, `delay ${decided.delayMs} ms`);
      const stop = await runplan(['stop', 'rate-limit', '--wait', '60s'], f);
      assert.is(stop.exitCode, 0, stop.stderr);
      const r = await running;
      assert.is(r.exitCode, 143, r.stderr);
      assert.not.match(r.stderr, /TimeoutOverflowWarning/);
      assert.is(readLedger(f.ledger).length, 1, 'retried before the reset');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'is_error: true with exit 0 fails the attempt',
  withTimeout(60_000, async () => {
    const f = setup('is-error');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const { data } = await receipt(f, 'is-error');
      assert.is(data.reason, 'agent_error');
      assert.is(ofType(await records(f.repo, 'is-error'), 'command-settled')[0]!.exitCode, 0);
      assert.is(ofType(await records(f.repo, 'is-error'), 'checkpoint').length, 0);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'provider_reset_too_far: the rerun its receipt names is refused until the reset, saying when, and goes on after it, its provider count started over',
  withTimeout(90_000, async () => {
    const reset = Math.floor(Date.now() / 1000) + 4;
    const f = setup(`slug = "far"
base = "main"
[repair]
provider_max_wait = "500ms"
provider = 2
backoff = "100ms"
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
deadline = "1m"

[[tasks]]
id = "limited"
prompt = """
mock: on-attempt 1 rate-limit ${reset}
mock: on-attempt 2 rate-limit
mock: write out.txt x
"""
`);
    try {
      const first = await runplan(['run', f.plan], f);
      assert.is(first.exitCode, 1, first.stderr);
      assert.match(first.stderr, /provider_reset_too_far: .*rerun after the reset with: runplan run /);
      const at = new Date(reset * 1000).toISOString();
      const report = JSON.parse((await runplan(['report', 'far', '--json'], f)).stdout) as { resumeNote: string | null };
      assert.is(report.resumeNote, `not before ${at}, when the provider's limit resets`);
      const early = await runplan(['run', f.plan], f);
      assert.is(early.exitCode, 3, early.stderr);
      assert.ok(early.stderr.includes(`limited of run `) && early.stderr.includes(`resets at ${at}: not before then`), early.stderr);
      assert.ok(early.stderr.includes(`hint: run the same command after ${at}`), early.stderr);
      assert.is(readLedger(f.ledger).length, 1, 'not dispatched before the reset');
      // The reset is a time on the clock: wait for the clock.
      await waitUntil('the reset passed', () => Date.now() > reset * 1000, { timeoutMs: 10_000 });
      // After it: an ordinary 429 is waited out and retried (provider = 2), not a cap already
      // spent by the too-far one.
      const after = await runplan(['run', f.plan], f);
      assert.is(after.exitCode, 0, after.stderr);
      assert.is(readLedger(f.ledger).length, 3, 'dispatched after the reset, rate limited, retried');
    } finally {
      f.cleanup();
    }
  }),
);

// Keep going: two tasks each stopped for good by their first failure.
const TWO_STOPPED = `slug = "two-stopped"
base = "main"
keep_going = true
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
deadline = "1m"
grace = "2s"

[[tasks]]
id = "a"
repair = { task = 0 }
prompt = "mock: fail-first 9"

[[tasks]]
id = "b"
repair = { task = 0 }
prompt = "mock: fail-first 9"
`;

test(
  'a continuation with two tasks repair stopped is refused once, naming both; its hint, with the --retry already given, is the command that goes on',
  withPlan(TWO_STOPPED, {}, async (f) => {
    const first = await runplan(['run', f.plan], f);
    assert.is(first.exitCode, 1, first.stderr);
    // The report's "to go on" says what the bare command would meet.
    const report = JSON.parse((await runplan(['report', 'two-stopped', '--json'], f)).stdout) as { resumeNote: string | null };
    assert.is(report.resumeNote, 'refused while a, b stay stopped by repair: add --retry a --retry b if the cause changed');
    const refused = await runplan(['run', f.plan], f);
    assert.is(refused.exitCode, 3, refused.stderr);
    assert.match(refused.stderr, /repair_stopped: 2 tasks of run \S+ were stopped by repair: a \(class task, [^)]*\); b \(class task, /);
    assert.match(refused.stderr, /hint: if their causes changed: runplan run \S+ --retry a --retry b {3}\(or --fresh/);
    // Half of it given: the hint keeps it and adds the other.
    const half = await runplan(['run', f.plan, '--retry', 'b'], f);
    assert.is(half.exitCode, 3, half.stderr);
    assert.match(half.stderr, /repair_stopped: task a of run \S+ was stopped by repair/);
    assert.match(half.stderr, /hint: if its cause changed: runplan run \S+ --retry b --retry a {3}/);
    assert.is(readLedger(f.ledger).length, 2, 'nothing dispatched by a refused run');
    // The hint's command dispatches both again.
    const hinted = /runplan run \S+ (--retry \S+ --retry \S+)/.exec(half.stderr)![1]!.split(' ');
    const again = await runplan(['run', f.plan, ...hinted], f);
    assert.is(again.exitCode, 1, again.stderr);
    assert.equal(Object.fromEntries(dispatchCounts(f.ledger)), { a: 2, b: 2 });
  }),
);

test(
  '--retry TASK after a repeated_failure dispatches it once more (continuation), journaled; a repeat names the real earlier attempt',
  withPlan('repeat-fail', {}, async (f) => {
    const first = await runplan(['run', f.plan], f);
    assert.is(first.exitCode, 1, first.stderr);
    assert.is(readLedger(f.ledger).length, 2);
    assert.match(first.stderr, /same failure as failed attempt 1 \(fingerprint [0-9a-f]{12}\)/);
    const same = await runplan(['run', f.plan], f);
    assert.is(same.exitCode, 3, 'without --retry nothing changed: refused');
    assert.match(same.stderr, /repair_stopped: task broken/);
    assert.match(same.stderr, /--retry broken/);
    assert.is(readLedger(f.ledger).length, 2, 'not redispatched');
    const again = await runplan(['run', f.plan, '--retry', 'broken'], f);
    assert.is(again.exitCode, 1, again.stderr);
    assert.is(readLedger(f.ledger).length, 4, 'the history started over: 2 more dispatches');
    // Attempts 3 and 4 failed alike: the repeat points at evidence/broken.3, not at attempt 1.
    assert.match(again.stderr, /same failure as failed attempt 3 \(fingerprint [0-9a-f]{12}\)/);
    const rs = await records(f.repo, 'repeat-fail'); // the continuation's journal
    assert.equal(
      ofType(rs, 'operator-retry').map((d) => d.taskId),
      ['broken'],
    );
    const stops = ofType(rs, 'repair-decided').filter((d) => d.action === 'stop');
    assert.equal(
      stops.map((d) => [d.attempt, /same failure as failed attempt (\d+) /.exec(String(d.detail))?.[1]]),
      [[4, '3']],
    );
    const terminal = rs.filter((r) => r.terminal === true);
    assert.match(String((terminal.at(-1)!.data as { message?: unknown }).message), /same failure as failed attempt 3 /);
    const preview = await runplan(['run', f.plan, '--dry-run'], f);
    assert.match(preview.stdout + preview.stderr, /same failure as failed attempt 3 /);
    assert.is(runIds(f.repo, 'repeat-fail').length, 2);
    const bad = await runplan(['run', f.plan, '--retry', 'nope'], f);
    assert.is(bad.exitCode, 3);
  }),
);

test(
  'budget: exceeded stops the run (class budget); a continuation refuses until it is raised; raised, it runs only what is left',
  withTimeout(150_000, async () => {
    const f = setup('budget');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const { data } = await receipt(f, 'budget');
      assert.is(data.class, 'budget');
      assert.is(data.reason, 'max_tokens');
      assert.equal([...dispatchCounts(f.ledger).keys()], ['b1', 'b2']);

      const refused = await runplan(['run', f.plan], f);
      assert.is(refused.exitCode, 3, refused.stderr);
      assert.match(refused.stderr, /budget_spent/);
      assert.is(runIds(f.repo, 'budget').length, 1, 'nothing written');

      writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace(/^max_tokens = 1500$/m, 'max_tokens = 10000'));
      const raised = await runplan(['run', f.plan], f);
      assert.is(raised.exitCode, 0, raised.stderr);
      const counts = dispatchCounts(f.ledger);
      assert.is(counts.get('b1'), 1);
      assert.is(counts.get('b2'), 1);
      assert.is(counts.get('b3'), 1);
      const rs = await records(f.repo, 'budget');
      assert.equal(
        ofType(rs, 'checkpoint-adopted').map((d) => d.taskId),
        ['b1', 'b2'],
      );
      assert.is(ofType(rs, 'run-started')[0]!.usageCarried.inputTokens, 1200);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'repair caps survive a kill -9 and resume: no extra dispatch',
  withTimeout(120_000, async () => {
    const f = setup('repeat-fail', {}, { RUNPLAN_FAILPOINT: 'kill-after:repair-decided' });
    try {
      const crashed = await runplan(['run', f.plan], f);
      assert.is(crashed.signal, 'SIGKILL');
      assert.is(readLedger(f.ledger).length, 1);
      const r = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: '' } });
      assert.is(r.exitCode, 1, r.stderr);
      assert.is(readLedger(f.ledger).length, 2, 'one retry in all, not one per coordinator');
      const { data } = await receipt(f, 'repeat-fail');
      assert.is(data.reason, 'repeated_failure');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'an improve-verify loop reaches green in round 3, then its result is checkpointed',
  withTimeout(90_000, async () => {
    const f = setup('loop');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(readLedger(f.ledger).length, 3, 'three rounds, one attempt');
      const rounds = ofType(await records(f.repo, 'loop'), 'round-done');
      assert.equal(
        rounds.map((d) => [d.round, d.action]),
        [
          [1, 'next_round'],
          [2, 'next_round'],
          [3, 'done'],
        ],
      );
      assert.is(f.repo.fileAt('runplan/loop', 'rounds.txt'), 'round 1\nround 2\nround 3\n');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'a stagnating loop stops with class stagnation before its cap',
  withTimeout(90_000, async () => {
    const f = setup('stagnate');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const { data } = await receipt(f, 'stagnate');
      assert.is(data.class, 'stagnation');
      assert.ok(readLedger(f.ledger).length < 10, 'stopped before rounds = 10');
      assert.is(readLedger(f.ledger).length, 2);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'a loop resumed mid-way continues from its recorded round and its kept tree',
  withTimeout(120_000, async () => {
    const f = setup('loop-slow', {}, { RUNPLAN_FAILPOINT: 'kill-after:round-done:improve' });
    try {
      const crashed = await runplan(['run', f.plan], f);
      assert.is(crashed.signal, 'SIGKILL');
      const r = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: '' } });
      assert.is(r.exitCode, 0, r.stderr);
      const rounds = ofType(await records(f.repo, 'loop-slow'), 'round-done');
      // The new attempt continues from round 1's kept tree (its round ref) and numbers on
      // from round 2, with 8 - 1 rounds left: round 4 is green, as without the crash.
      assert.equal(
        rounds.map((d) => [d.attempt, d.round]),
        [
          [1, 1],
          [2, 2],
          [2, 3],
          [2, 4],
        ],
      );
      assert.is(rounds.at(-1)!.action, 'done');
      assert.is(readLedger(f.ledger).length, 4);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'usage: a Claude result with modelUsage and codex turns summed per attempt, in the receipt and in status',
  withTimeout(90_000, async () => {
    const f = setup('usage');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      const settled = new Map(ofType(await records(f.repo, 'usage'), 'command-settled').map((d) => [d.taskId, d]));
      assert.equal(settled.get('claude')!.usage, { inputTokens: 1050, outputTokens: 210, cacheReadTokens: 3000, cacheCreationTokens: 400 });
      assert.ok(Math.abs(settled.get('claude')!.costUsd - 0.021) < 1e-9);
      assert.equal(settled.get('codex')!.usage, { inputTokens: 300, outputTokens: 60, cacheReadTokens: 30, cacheCreationTokens: 0 });
      assert.is(settled.get('codex')!.costUsd, null);
      const { data } = await receipt(f, 'usage');
      assert.equal(data.usage, { inputTokens: 1350, outputTokens: 270, cacheReadTokens: 3030, cacheCreationTokens: 400 });
      const status = JSON.parse((await runplan(['status', '--json'], f)).stdout.trim());
      assert.equal(status.usage, data.usage);
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'the agent closes stdin while a 1 MiB prompt is written: EPIPE is the cause, usage reported once per attempt',
  withTimeout(90_000, async () => {
    const f = setup('close-stdin');
    try {
      const line = 'context line that pads the prompt to a mebibyte of text.\n';
      writeFileSync(join(f.repo.path, 'big-prompt.txt'), line.repeat(Math.ceil((1 << 20) / line.length)));
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 1, r.stderr);
      const rs = await records(f.repo, 'close-stdin');
      const settled = ofType(rs, 'command-settled');
      assert.ok(settled.length >= 1);
      for (const d of settled) {
        assert.match(String(d.error), /EPIPE/);
        assert.equal(d.usage, { inputTokens: 11, outputTokens: 7, cacheReadTokens: 5, cacheCreationTokens: 3 });
      }
      const closed = ofType(rs, 'attempt-closed')[0]!;
      assert.is(closed.reason, 'transport_error');
      assert.match(closed.failure.message, /EPIPE/);
      const { data } = await receipt(f, 'close-stdin');
      assert.is(data.usage.inputTokens, 11 * settled.length);
    } finally {
      f.cleanup();
    }
  }),
);

test.run();
