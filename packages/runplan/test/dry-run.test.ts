// `runplan run PLAN --dry-run` through the real bin: it says what the next `run` would do —
// start, resume, continue or up to date; skip, adopt, dispatch or refuse; the budget and the
// land pre-check — takes no lock and writes nothing (no journal, no worktree, no ref).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchCounts, runBin } from '@runplan/test-fixtures';
import {
  filesUnder,
  type Fixture,
  ofType,
  RUNPLAN,
  records,
  runIds,
  runplan,
  slugDir,
  waitForHolding,
  withPlan,
  loopPlan,
} from './support.js';

// Everything a run could write: the state root's files (and their bytes), refs, worktrees.
function snapshot(f: Fixture): string {
  const state = join(f.repo.path, '.git', 'runplan');
  const files = existsSync(state)
    ? filesUnder(state)
        .sort()
        .map((p) => `${p} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`)
    : ['(no state root)'];
  return [
    ...files,
    f.repo.git(['for-each-ref', '--format=%(refname) %(objectname)']),
    f.repo.git(['worktree', 'list', '--porcelain']),
  ].join('\n');
}

async function dry(f: Fixture, extra: string[] = []) {
  const before = snapshot(f);
  const r = await runplan(['run', f.plan, '--dry-run', ...extra], f);
  assert.is(snapshot(f), before, `--dry-run ${extra.join(' ')} wrote nothing`);
  return { ...r, lines: r.stdout.split('\n').filter((l) => l !== '') };
}

test(
  'a slug with no runs: a new run from the base, every task dispatched as attempt 1; the state root is not even created',
  withPlan('budget', { timeoutMs: 60_000 }, async (f) => {
    const head = f.repo.git(['rev-parse', 'main']);
    const r = await dry(f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal(r.lines, [
      `new run base main ${head}`,
      'budget tokens 0/1500 cost $0.00',
      'dispatch b1 attempt 1',
      'dispatch b2 attempt 1',
      'dispatch b3 attempt 1',
    ]);
    assert.not.ok(existsSync(join(f.repo.path, '.git', 'runplan')), 'no state root');
    const json = await dry(f, ['--json']);
    assert.is(json.exitCode, 0, json.stderr);
    assert.equal(
      json.lines.map((l) => JSON.parse(l)),
      [
        { action: 'new_run', base: 'main', baseCommit: head },
        { action: 'budget', tokens: 0, costUsd: 0, maxTokens: 1500, maxCostUsd: null },
        { action: 'dispatch', task: 'b1', attempt: 1 },
        { action: 'dispatch', task: 'b2', attempt: 1 },
        { action: 'dispatch', task: 'b3', attempt: 1 },
      ],
    );
    assert.is(dispatchCounts(f.ledger).size, 0, 'no agent ran');
  }),
);

test(
  'after a budget stop it refuses as run would (exit 3, same reason and hint); under a raised [budget] it continues: adopt, adopt, dispatch — and run does just that; then up to date',
  withPlan('budget', { timeoutMs: 150_000 }, async (f) => {
    const failed = await runplan(['run', f.plan], f);
    assert.is(failed.exitCode, 1, failed.stderr);
    const [origin] = runIds(f.repo, 'budget');
    const refused = await dry(f, ['--new-run']);
    assert.is(refused.exitCode, 3, refused.stderr);
    assert.equal(refused.lines, ['refuse budget_spent']);
    const real = await runplan(['run', f.plan, '--new-run'], f);
    assert.is(real.exitCode, 3);
    assert.is(refused.stderr, real.stderr, 'the same refusal, reason and hint, as run');

    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace(/^max_tokens = 1500$/m, 'max_tokens = 10000'));
    const cps = ofType(await records(f.repo, 'budget'), 'checkpoint');
    const base = f.repo.git(['rev-parse', 'main']);
    const r = await dry(f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal(r.lines, [
      `continue run ${origin} base ${base}`,
      'budget tokens 2000/10000 cost $0.10',
      `adopt b1 checkpoint ${cps[0]!.id} run ${origin}`,
      `adopt b2 checkpoint ${cps[1]!.id} run ${origin}`,
      'dispatch b3 attempt 1',
    ]);
    const ran = await runplan(['run', f.plan], f);
    assert.is(ran.exitCode, 0, ran.stderr);
    assert.equal(
      [...dispatchCounts(f.ledger)],
      [
        ['b1', 1],
        ['b2', 1],
        ['b3', 1],
      ],
    );

    const [, second] = runIds(f.repo, 'budget');
    const result = f.repo.git(['rev-parse', 'runplan/budget']);
    const current = await dry(f);
    assert.is(current.exitCode, 0, current.stderr);
    assert.equal(current.lines, [
      `up to date: run ${second}, ${result}`,
      `skip b1 checkpoint ${cps[0]!.id} run ${origin}`,
      `skip b2 checkpoint ${cps[1]!.id} run ${origin}`,
      `skip b3 checkpoint ${ofType(await records(f.repo, 'budget'), 'checkpoint')[0]!.id} run ${second}`,
    ]);
  }),
);

test(
  'a program a task would not find (its command, a gate, until; a name off PATH or a path that is no executable file) is named on stderr; the dispatch stands (exit 0), and run then fails it spawn_failed',
  withPlan(
    `slug = "programs"
base = "main"
[defaults]
format = "text"
deadline = "1m"
expect = "none"
[[tasks]]
id = "typo"
prompt = "x"
command = ["no-such-agent-runplan-test", "-p"]
gates = [["sh", "-c", "true"], ["/no/such/gate", "x"]]
[[tasks]]
id = "fine"
prompt = "x"
command = ["sh", "-c", "cat >/dev/null"]
until = ["./checks/verify.sh"]
gates = [["{{harness.workdir}}/gate.sh"]]
[[tasks]]
id = "own-path"
prompt = "x"
command = ["mock-agent", "own-path", "1"]
env = { PATH = "/nonexistent-runplan-test-dir" }
`,
    { timeoutMs: 60_000 },
    async (f) => {
      const r = await dry(f);
      assert.is(r.exitCode, 0, r.stderr);
      assert.equal(
        r.lines.filter((l) => l.startsWith('dispatch')),
        ['dispatch typo attempt 1', 'dispatch fine attempt 1', 'dispatch own-path attempt 1'],
      );
      const notices = r.stderr.split('\n').filter((l) => l.startsWith('runplan: command_not_found'));
      assert.equal(notices, [
        'runplan: command_not_found: task typo: "no-such-agent-runplan-test" is not on the PATH its attempt gets; the attempt would fail (spawn_failed)',
        'runplan: command_not_found: task typo: "/no/such/gate" is not an executable file; the attempt would fail (spawn_failed)',
        'runplan: command_not_found: task own-path: "mock-agent" is not on the PATH its attempt gets; the attempt would fail (spawn_failed)',
      ]);
      const json = (await dry(f, ['--json'])).lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(
        json.filter((s) => s.action === 'dispatch').map((s) => [s.task, s.notFound]),
        [
          ['typo', ['no-such-agent-runplan-test', '/no/such/gate']],
          ['fine', undefined],
          ['own-path', ['mock-agent']],
        ],
      );
      const run = await runplan(['run', f.plan, '--keep-going'], f);
      assert.is(run.exitCode, 1, run.stderr);
      assert.match(run.stderr, /spawn_failed: task typo, phase command, class environment: /);
    },
  ),
);

test(
  'a base that names no commit: refuse base_missing (exit 3), as run does',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace('base = "main"', 'base = "gone"'));
    const r = await dry(f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.equal(r.lines, ['refuse base_missing']);
    assert.match(r.stderr, /^runplan: base_missing: base "gone" of .* names no commit in /m);
  }),
);

test(
  'a land branch moved off the integration line: refuse land_moved before any work',
  withPlan('single', { timeoutMs: 60_000 }, async (f) => {
    f.repo.git(['branch', 'target']);
    f.repo.git(['commit', '-q', '--allow-empty', '-m', 'elsewhere']);
    f.repo.git(['branch', '-f', 'target', 'HEAD']);
    f.repo.git(['reset', '-q', '--hard', 'HEAD~1']);
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace('base = "main"', 'base = "main"\nland = "target"'));
    const r = await dry(f);
    assert.is(r.exitCode, 3, r.stderr);
    assert.is(r.lines.at(-1), 'refuse land_moved');
    assert.match(r.stderr, /^runplan: land_moved: refs\/heads\/target is at /m);
    f.repo.git(['branch', '-f', 'target', 'main']);
    const ok = await dry(f);
    assert.is(ok.exitCode, 0, ok.stderr);
    assert.ok(ok.lines.includes('land target pre-check ok'), ok.stdout);
  }),
);

test(
  'while a coordinator is live: exit 4 naming it, and nothing touched',
  withPlan('single', { env: { MOCK_HOLD: 'only', MOCK_HOLD_SECONDS: '120' }, timeoutMs: 150_000 }, async (f) => {
    let coordinator = 0;
    const run = runBin(RUNPLAN, ['run', f.plan], {
      env: f.env,
      cwd: f.repo.path,
      timeoutMs: 140_000,
      onSpawn: (pid) => (coordinator = pid),
    });
    try {
      await waitForHolding(f.repo, 'single', 'only');
      const r = await runplan(['run', f.plan, '--dry-run'], f);
      assert.is(r.exitCode, 4, r.stderr);
      assert.is(r.stdout, '');
      assert.match(r.stderr, new RegExp(`^runplan: lock_held: slug single is being run by pid ${coordinator} `, 'm'));
      assert.match(r.stderr, /^ {2}hint: runplan status single; runplan stop single$/m);
      const json = await runplan(['run', f.plan, '--dry-run', '--json'], f);
      assert.is(json.exitCode, 4, json.stderr);
      const locked = JSON.parse(json.stdout) as { action: string; slug: string; holder: { pid: number } };
      assert.equal([locked.action, locked.slug, locked.holder.pid], ['locked', 'single', coordinator]);
      assert.ok(existsSync(slugDir(f.repo, 'single')));
    } finally {
      if (coordinator > 0) process.kill(coordinator, 'SIGKILL');
      await run.catch(() => undefined);
    }
  }),
);

test(
  'a continuation on a moved base: continue on the old base, and base_moved said as run says it (stderr; a notice with --json)',
  withPlan('budget', { timeoutMs: 120_000 }, async (f) => {
    const old = f.repo.git(['rev-parse', 'main']);
    const failed = await runplan(['run', f.plan], f);
    assert.is(failed.exitCode, 1, failed.stderr);
    writeFileSync(f.plan, readFileSync(f.plan, 'utf8').replace(/^max_tokens = 1500$/m, 'max_tokens = 10000'));
    f.repo.git(['commit', '-q', '--allow-empty', '-m', 'moved']);
    const moved = f.repo.git(['rev-parse', 'main']);
    const [run] = runIds(f.repo, 'budget');
    const r = await dry(f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(r.lines[0], `continue run ${run} base ${old}`);
    const said = `runplan: base_moved: continuing from ${old}; ${moved} is the base now — runplan run ${f.plan} --new-run starts from it`;
    assert.ok(r.stderr.split('\n').includes(said), r.stderr);
    const json = await dry(f, ['--json']);
    assert.ok(
      json.lines.map((l) => JSON.parse(l)).some((o) => o.action === 'notice' && o.line === said),
      json.stdout,
    );
  }),
);

const LOOP = loopPlan('crash-loop');

test(
  'after a crash mid-loop: resume, the loop from its durable round; with --fresh: abandon it and start new — and the incomplete run is left as it is',
  withPlan(LOOP, { timeoutMs: 120_000, env: { RUNPLAN_FAILPOINT: 'kill-after:round-done:improve' } }, async (f) => {
    const crashed = await runplan(['run', f.plan], f);
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    f.env.RUNPLAN_FAILPOINT = '';
    const [run] = runIds(f.repo, 'crash-loop');
    const base = f.repo.git(['rev-parse', 'main']);
    const r = await dry(f);
    assert.is(r.exitCode, 0, r.stderr);
    const spent = /^budget tokens \d+ cost \$\d+\.\d\d \(no \[budget\]\)$/;
    assert.match(r.lines[1]!, spent);
    assert.equal(r.lines, [`resume run ${run} base ${base}`, r.lines[1], 'dispatch improve attempt 2 from round 1 of attempt 1']);
    const fresh = await dry(f, ['--fresh']);
    assert.is(fresh.exitCode, 0, fresh.stderr);
    assert.equal(fresh.lines, [`new run base main ${base}`, `abandon run ${run}`, r.lines[1], 'dispatch improve attempt 2']);
    assert.is(runIds(f.repo, 'crash-loop').length, 1);
    assert.is(ofType(await records(f.repo, 'crash-loop'), 'run-failed').length, 0, 'not closed as abandoned');
  }),
);

test(
  'an option value run refuses is refused by --dry-run as run says it (--jobs abc, 0, 1.5: exit 2), and a state dir run cannot create: exit 3 state_unwritable',
  withPlan('single', { timeoutMs: 90_000 }, async (f) => {
    for (const jobs of ['abc', '0', '1.5']) {
      const real = await runplan(['run', f.plan, '--jobs', jobs], f);
      assert.is(real.exitCode, 2, real.stderr);
      assert.match(real.stderr, `runplan: usage: --jobs ${jobs}: not a positive integer`);
      const r = await dry(f, ['--jobs', jobs]);
      assert.equal([r.exitCode, r.stdout, r.stderr], [2, '', real.stderr], `--jobs ${jobs}`);
    }
    const file = join(f.repo.path, 'not-a-dir');
    writeFileSync(file, '');
    for (const stateDir of [file, join(file, 'below')]) {
      const real = await runplan(['run', f.plan, '--state-dir', stateDir], f);
      assert.is(real.exitCode, 3, real.stderr);
      assert.match(real.stderr, /^runplan: state_unwritable: cannot create /);
      const r = await dry(f, ['--state-dir', stateDir]);
      assert.equal([r.exitCode, r.lines, r.stderr], [3, ['refuse state_unwritable'], real.stderr], stateDir);
    }
    writeFileSync(f.plan, `${readFileSync(f.plan, 'utf8')}\nno_such_key = 1\n`);
    const invalid = await runplan(['run', f.plan, '--dry-run', '--json'], f);
    assert.is(invalid.exitCode, 2, invalid.stderr);
    const problem = JSON.parse(invalid.stdout) as { action: string; file: string; problems: unknown[] };
    assert.equal([problem.action, problem.file, problem.problems.length > 0], ['invalid_plan', f.plan, true]);
  }),
);

test.run();
