import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts, readLedger, tempDir, withTimeout } from '@runplan/test-fixtures';
import { journalPath, ofType, records, runIds, runplan, setup, slugDir, withPlan } from './support.js';
import { loadPlan } from '../src/plan/load.js';
import { taskListDigest } from '../src/plan/digest.js';

const THIRTEEN = ['t01', 't02', 't03', 't04', 't05', 't06', 't07', 't08', 't09', 't10', 't11', 't12', 't13'];

for (const jobs of ['1', '3']) {
  test(
    `the 13-task plan with --jobs ${jobs}: every change on the branch, each task dispatched once, one complete receipt`,
    withTimeout(180_000, async () => {
      const f = setup('thirteen');
      try {
        const r = await runplan(['run', f.plan, '--jobs', jobs], f, 170_000);
        assert.is(r.exitCode, 0, r.stderr);
        assert.match(r.stderr, /runplan: complete: 13 task\(s\)/);
        // The progress line for run-started counts the tasks from its taskCount.
        assert.match(r.stderr, /run-started thirteen: 13 task\(s\), run /);
        const counts = dispatchCounts(f.ledger);
        assert.equal([...counts.keys()].sort(), THIRTEEN);
        for (const id of THIRTEEN) assert.is(counts.get(id), 1, `${id} dispatched ${counts.get(id)} times`);
        for (const id of THIRTEEN) assert.ok(f.repo.fileAt('runplan/thirteen', `out/${id}.txt`), `out/${id}.txt on the branch`);
        assert.is(f.repo.fileAt('runplan/thirteen', 'notes/chain.txt'), 't07\nt08\nt11\nt13\n');
        const rs = await records(f.repo, 'thirteen');
        const terminal = rs.filter((x) => x.terminal === true);
        assert.is(terminal.length, 1);
        assert.is(terminal[0]!.type, 'run-complete');
        assert.is(ofType(rs, 'checkpoint').length, 13);
        const started = ofType(rs, 'run-started')[0]!;
        assert.is(started.taskCount, 13);
        const plan = await loadPlan(f.plan);
        assert.ok(plan.ok);
        if (plan.ok) assert.is(started.tasksDigest, taskListDigest(plan.value));
        assert.is(started.tasks, undefined);
        assert.ok(existsSync(started.planCopy));
        // The run-started record (with every contract digest) precedes the first dispatch.
        assert.ok(rs.findIndex((x) => x.type === 'run-started') < rs.findIndex((x) => x.type === 'attempt-started'));
        // Dependencies: a task starts only after each of its needs is checkpointed.
        const order = rs.map((x) => `${x.type}:${(x.data as { taskId?: string }).taskId ?? ''}`);
        assert.ok(order.indexOf('checkpoint:t06') < order.indexOf('attempt-started:t07'));
        assert.ok(order.indexOf('checkpoint:t11') < order.indexOf('attempt-started:t13'));
        assert.ok(order.indexOf('checkpoint:t12') < order.indexOf('attempt-started:t13'));
        // The checkpoint chain: each names its needs' checkpoint ids.
        const cps = new Map(ofType(rs, 'checkpoint').map((c) => [c.taskId, c]));
        assert.equal(cps.get('t13')!.dependencyCheckpointIds, [cps.get('t11')!.id, cps.get('t12')!.id]);
        assert.is(f.repo.head('runplan/thirteen'), terminal[0]!.data.resultCommit as string);
        // Finished attempts' worktrees are removed.
        assert.not.match(f.repo.git(['worktree', 'list']), /\/tree /);
        assert.is(readLedger(f.ledger).length, 13);
      } finally {
        f.cleanup();
      }
    }),
  );
}

test(
  'one task: journal layout, 0700 state, attempt events in order',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const rs = await records(f.repo, 'single');
    const types = rs.map((x) => x.type).filter((t) => t !== 'journal-header');
    assert.equal(types, [
      'run-started',
      'branch-updated',
      'attempt-started',
      'command-settled',
      'integrated',
      'checkpoint',
      'branch-updated',
      'attempt-closed',
      'run-complete',
    ]);
    const started = ofType(rs, 'attempt-started')[0]!;
    assert.match(started.ownerTag, /\S+/);
    assert.is(started.attempt, 1);
    assert.is(started.baseCommit, f.repo.head('main'));
    const { statSync } = await import('node:fs');
    assert.is(statSync(slugDir(f.repo, 'single')).mode & 0o777, 0o700);
    assert.is(statSync(started.dir).mode & 0o777, 0o700);
    assert.ok(existsSync(`${started.dir}/.harness-run-dir`));
    assert.is(f.repo.fileAt('runplan/single', 'out/only.txt'), 'hello from only\n');
    assert.is(runIds(f.repo, 'single').length, 1);
    assert.match(journalPath(f.repo, 'single'), /\/\d{8}T\d{6}Z-[0-9a-f]{8}\/journal\.jsonl$/);
  }),
);

test(
  'durations past setTimeout’s 24.8 days (deadline, stall, grace, gate_deadline, hook timeout of 700h) validate and do not fire at once',
  withPlan('long-durations', { timeoutMs: 60_000 }, async (f) => {
    const v = await runplan(['validate', f.plan], f);
    assert.is(v.exitCode, 0, v.stderr);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.not.match(r.stderr, /TimeoutOverflowWarning/);
    const rs = await records(f.repo, 'long-durations');
    assert.is(ofType(rs, 'command-settled')[0]!.reason, 'exited');
    assert.is(ofType(rs, 'checkpoint').length, 1);
    assert.is(f.repo.fileAt('runplan/long-durations', 'out/only.txt'), 'hello from only\n');
  }),
);

test(
  'an invalid plan: every problem listed with its key path, exit 2, nothing started',
  withPlan('invalid', { timeoutMs: 60_000 }, async (f) => {
    const v = await runplan(['validate', f.plan], f);
    assert.is(v.exitCode, 2);
    for (const expected of ['bogus_key', 'tasks[1].id', 'missing', 'soon', 'no.such.var', 'colour', 'prompt_file']) {
      assert.ok(v.stderr.includes(expected), `validate names ${expected}:\n${v.stderr}`);
    }
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 2);
    assert.is(r.stderr, v.stderr);
    assert.is(readLedger(f.ledger).length, 0);
    assert.not.ok(existsSync(slugDir(f.repo, 'invalid')));
    assert.is(f.repo.head('runplan/invalid'), undefined);
  }),
);

test(
  'a task id or slug too long to name a directory is refused at validate (exit 2), nothing started; 100 characters run',
  withPlan(
    'single',
    { timeoutMs: 60_000, replacements: { 'id = "only"': `id = "${'t'.repeat(300)}"`, 'slug = "single"': `slug = "${'s'.repeat(101)}"` } },
    async (f) => {
      // Both passed validate; the run then failed on ENAMETOOLONG (internal_error, exit 1; or state_unwritable).
      const v = await runplan(['validate', f.plan], f);
      assert.is(v.exitCode, 2, v.stderr);
      assert.match(v.stderr, `tasks[0].id: "${'t'.repeat(20)}…" is 300 characters long: at most 100 (it names directories and branches)`);
      assert.match(v.stderr, `slug: "${'s'.repeat(20)}…" is 101 characters long: at most 100`);
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 2, r.stderr);
      assert.is(readLedger(f.ledger).length, 0);
      assert.not.ok(existsSync(join(f.repo.path, '.git', 'runplan')));
      writeFileSync(
        f.plan,
        readFileSync(f.plan, 'utf8').replace('t'.repeat(300), 't'.repeat(100)).replace('s'.repeat(101), 's'.repeat(100)),
      );
      const ok = await runplan(['run', f.plan], f);
      assert.is(ok.exitCode, 0, ok.stderr);
    },
  ),
);

test(
  'a JSON plan that gives a key twice in one object is a parse_error naming the key and its line (exit 2), never the last one taken',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    const plan = join(f.repo.path, 'twice.json');
    const task = (id: string) => `{"id": "${id}", "command": ["/bin/true"], "expect": "none"}`;
    // JSON.parse kept the second "tasks": task a was dropped without a word and b ran alone (exit 0).
    writeFileSync(plan, `{"slug": "twice",\n "tasks": [${task('a')}],\n "tasks": [${task('b')}]}\n`);
    for (const command of ['validate', 'run']) {
      const r = await runplan([command, plan], f);
      assert.is(r.exitCode, 2, r.stderr);
      assert.match(
        r.stderr,
        `runplan: parse_error: ${plan}: ${plan} is not a valid plan at line 3, column 2: key "tasks" is given twice in one object\n`,
      );
    }
    assert.not.ok(existsSync(join(f.repo.path, '.git', 'runplan', 'twice')));
    // The same key in two objects, and a key's text inside a string value, are not repeats.
    writeFileSync(plan, `{"slug": "twice", "defaults": {"env": {"A": "\\"tasks\\": 1"}}, "tasks": [${task('a')}, ${task('b')}]}\n`);
    const ok = await runplan(['validate', plan], f);
    assert.is(ok.exitCode, 0, ok.stderr);
  }),
);

test(
  'a NUL byte in an argv (command, gates, hooks) or an env value is refused at validate (exit 2), nothing started',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    const plan = join(f.repo.path, 'nul.toml');
    writeFileSync(
      plan,
      [
        'slug = "nul"',
        '[hooks]',
        'pre_run = ["echo", "a\\u0000b"]',
        '[[tasks]]',
        'id = "a"',
        'command = ["mock-agent", "{{task.id}}\\u0000"]',
        'gates = [["true"], ["test", "\\u0000"]]',
        'env = { A = "x\\u0000y" }',
        '',
      ].join('\n'),
    );
    // Each passed validate; every attempt then failed spawn_failed (class environment, exit 1).
    const v = await runplan(['validate', plan], f);
    assert.is(v.exitCode, 2, v.stderr);
    for (const at of ['hooks.pre_run[1]', 'tasks[0].command[1]', 'tasks[0].gates[1][1]'])
      assert.match(v.stderr, `runplan: nul_byte: ${plan}: ${at}: holds a NUL byte, which no program argument can carry\n`);
    assert.match(v.stderr, `runplan: nul_byte: ${plan}: tasks[0].env.A: holds a NUL byte, which no environment variable can carry\n`);
    assert.match(v.stderr, '4 problem(s); nothing was run');
    const r = await runplan(['run', plan], f);
    assert.is(r.exitCode, 2, r.stderr);
    assert.is(readLedger(f.ledger).length, 0);
    assert.not.ok(existsSync(join(f.repo.path, '.git', 'runplan', 'nul')));
    // An env_file value likewise (its line named, never its content: it is a secret).
    writeFileSync(join(f.repo.path, 'nul.env'), 'A=1\nB=x\0y\n');
    writeFileSync(plan, 'slug = "nul"\n[[tasks]]\nid = "a"\ncommand = ["/bin/true"]\nenv_file = "nul.env"\n');
    const envFile = await runplan(['validate', plan], f);
    assert.is(envFile.exitCode, 2, envFile.stderr);
    assert.match(
      envFile.stderr,
      `runplan: bad_env_file: ${plan}: tasks[0].env_file: ${join(f.repo.path, 'nul.env')}: line 2: the value holds a NUL byte\n`,
    );
  }),
);

test(
  'numbers out of range say which bound they cross and what they are (1e300, inf, nan), exit 2',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    const plan = join(f.repo.path, 'numbers.toml');
    writeFileSync(
      plan,
      [
        'slug = "numbers"',
        'jobs = -inf',
        '[repair]',
        'task = 1e300',
        'gate = nan',
        '[budget]',
        'max_cost_usd = inf',
        '[defaults]',
        'command = ["/bin/true"]',
        'expect = "none"',
        '[[tasks]]',
        'id = "a"',
        '',
      ].join('\n'),
    );
    const v = await runplan(['validate', plan], f);
    assert.is(v.exitCode, 2, v.stderr);
    // They read `must be at least 0, not 1e+300`, and inf or nan was `not a float` where a number was wanted.
    assert.match(v.stderr, `: jobs: must be an integer, not -inf\n`);
    assert.match(v.stderr, `: repair.task: must be at most 9007199254740991, not 1e+300\n`);
    assert.match(v.stderr, `: repair.gate: must be an integer, not nan\n`);
    assert.match(v.stderr, `: budget.max_cost_usd: must be a finite number, not inf\n`);
  }),
);

test(
  'usage errors exit 2 without a stack trace; --help lists exit codes',
  withPlan('single', { timeoutMs: 30_000 }, async (f) => {
    const bad = await runplan(['run', f.plan, '--jobs', 'zero'], f);
    assert.is(bad.exitCode, 2);
    assert.match(bad.stderr, /^runplan: usage: /);
    const unknown = await runplan(['run', f.plan, '--no-such-flag'], f);
    assert.is(unknown.exitCode, 2);
    assert.not.match(unknown.stderr, /at .*\.js:\d+/);
    const none = await runplan([], f);
    assert.is(none.exitCode, 2);
    const wait = await runplan(['stop', 'single', '--wait', 'soon'], f);
    assert.is(wait.exitCode, 2);
    assert.match(wait.stderr, /runplan: usage: --wait soon/);
    const statusFlag = await runplan(['status', '--bogus'], f);
    assert.is(statusFlag.exitCode, 2);
    const help = await runplan(['--help'], f);
    assert.is(help.exitCode, 0);
    assert.match(help.stdout, /Exit codes/);
    assert.match(help.stdout, /130\/143/);
    assert.is(readLedger(f.ledger).length, 0);
  }),
);

test(
  'retain = 1 prunes finished attempt dirs through workdir (newest kept, worktrees forgotten)',
  withTimeout(90_000, async () => {
    const plan = `slug = "retained"
base = "main"
retain = 1
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
[[tasks]]
id = "one"
prompt = "mock: write out/one.txt 1"
[[tasks]]
id = "two"
needs = ["one"]
prompt = "mock: write out/two.txt 2"
[[tasks]]
id = "three"
needs = ["two"]
prompt = "mock: write out/three.txt 3"
`;
    const f = setup(plan);
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 0, r.stderr);
      const { readdirSync } = await import('node:fs');
      const work = readdirSync(`${slugDir(f.repo, 'retained')}/work`);
      assert.is(work.length, 1, work.join(' '));
      assert.match(work[0]!, /\.three\.1$/);
      assert.ok(f.repo.fileAt('runplan/retained', 'out/three.txt'));
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'refusals before anything starts: a base that names no commit, a plan outside any repository (exit 3, nothing written)',
  withTimeout(60_000, async () => {
    const f = setup('single', { 'base = "main"': 'base = "no-such-branch"' });
    const outside = tempDir('runplan-norepo-');
    try {
      const r = await runplan(['run', f.plan], f);
      assert.is(r.exitCode, 3, r.stderr);
      assert.match(r.stderr, /^runplan: base_missing: base "no-such-branch"/);
      assert.not.ok(existsSync(slugDir(f.repo, 'single')));
      const { copyFileSync } = await import('node:fs');
      copyFileSync(f.plan, `${outside.path}/plan.toml`);
      const n = await runplan(['run', `${outside.path}/plan.toml`], { env: f.env });
      assert.is(n.exitCode, 3, n.stderr);
      assert.match(n.stderr, /^runplan: not_a_repository: /);
      assert.is(readLedger(f.ledger).length, 0);
    } finally {
      f.cleanup();
      outside.cleanup();
    }
  }),
);

test.run();
