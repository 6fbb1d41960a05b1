import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { binPath, gitRepo, runBin, tempDir, withTimeout } from '@runplan/test-fixtures';

// cac (mri) turns numeric-looking option values into numbers; runplan must read them as typed.
test(
  'option values are taken as typed: --state-dir 0042 names the directory 0042, not 42',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, '0042'));
      const typed = await runBin(binPath('runplan'), ['status', '--state-dir', '0042'], { cwd: dir.path });
      assert.is(typed.exitCode, 0, typed.stderr);
      const missing = await runBin(binPath('runplan'), ['status', 'nothing', '--state-dir', '0042'], { cwd: dir.path });
      assert.is(missing.exitCode, 1, missing.stderr);
      assert.match(missing.stderr, join(dir.path, '0042'));
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'an empty path option (--state-dir "", --repo "", --out "", --project "") is a usage error, exit 2, nothing written in the current directory',
  withTimeout(120_000, async () => {
    const repo = gitRepo();
    try {
      const plan = join(repo.path, 'plan.toml');
      writeFileSync(plan, 'slug = "empty"\n[defaults]\ncommand = ["/bin/true"]\nexpect = "none"\n[[tasks]]\nid = "a"\n');
      const runplan = (args: string[]) => runBin(binPath('runplan'), args, { cwd: repo.path });
      // `run --state-dir ""` resolved to the current directory: the state went into the work tree
      // (empty/, .plan-cache/) and a run started there, blind to the slug's runs under .git/runplan.
      for (const args of [
        ['run', plan, '--state-dir', ''],
        ['run', '--dry-run', plan, '--repo', ''],
        ['status', '--state-dir', ''],
        ['log', '--repo', ''],
        ['report', 'empty', '--out', ''],
        ['stop', 'empty', '--state-dir', ''],
        ['gate', 'claude', '--install', '--project', ''],
      ]) {
        const r = await runplan(args);
        const flag = args[args.length - 2]!;
        assert.is(r.exitCode, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.is(
          r.stderr,
          `runplan: usage: ${flag} "": an empty path; give a directory or file\n  hint: runplan --help\n`,
          args.join(' '),
        );
      }
      assert.is(repo.git(['status', '--porcelain', '--untracked-files=all']), '?? plan.toml', 'nothing written in the work tree');
    } finally {
      repo.cleanup();
    }
  }),
);

test(
  '--jobs takes decimal digits only: 0x10, 1e3, 5.0, +5, " 5" and 99999999999999999999 are usage errors (exit 2), as --jobs abc is',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const plan = join(dir.path, 'plan.toml');
      writeFileSync(plan, 'slug = "jobs"\n[defaults]\ncommand = ["/bin/true"]\n[[tasks]]\nid = "a"\n');
      // Number() took each of them (0x10 as 16, 1e20 as a count), and the run went on.
      for (const jobs of ['0x10', '1e3', '5.0', '+5', ' 5', '99999999999999999999']) {
        for (const command of [['run', '--dry-run'], ['run']]) {
          const r = await runBin(binPath('runplan'), [...command, plan, '--jobs', jobs, '--state-dir', dir.path], { cwd: dir.path });
          assert.is(r.exitCode, 2, `--jobs ${JSON.stringify(jobs)}: ${r.stderr}`);
          assert.is(r.stderr, `runplan: usage: --jobs ${jobs}: not a positive integer\n  hint: runplan --help\n`);
        }
      }
    } finally {
      dir.cleanup();
    }
  }),
);

// cac names an unknown option by its camelCase key; every tool says it as it was typed.
test(
  'an unknown option is named as typed (--keep-goin, --no-such-opt), by every tool',
  withTimeout(60_000, async () => {
    const cases: Array<[Parameters<typeof binPath>[0], string[], RegExp]> = [
      ['runplan', ['run', 'plan.toml', '--keep-goin'], /^runplan: usage: unknown option --keep-goin$/m],
      ['runplan', ['status', '--no-such-opt'], /^runplan: usage: unknown option --no-such-opt$/m],
      ['journal', ['cat', '--type-of', 'x', 'j.jsonl'], /^journal: usage: unknown option --type-of$/m],
      ['run-hook', ['--tier', 'pre_run', '--time-out', '1s', '--', 'true'], /^run-hook: usage: unknown option --time-out$/m],
      ['workdir', ['render', 'x', '--dry-runs'], /^workdir: usage: unknown option --dry-runs /m],
      ['settle', ['--dead-line', '1s', '--', 'true'], /^settle: usage: unknown option --dead-line$/m],
    ];
    for (const [tool, args, said] of cases) {
      const r = await runBin(binPath(tool), args);
      assert.ok(r.exitCode === 2 || r.exitCode === 125, `${tool}: ${r.exitCode} ${r.stderr}`);
      assert.match(r.stderr, said, `${tool}: ${r.stderr}`);
    }
  }),
);

// POSIX: `--` ends the options; what follows are the command's operands (cac keeps them apart).
test(
  "what follows -- is the command's operands in runplan, journal and workdir (a name may start with -); --version there is a name",
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const state = join(dir.path, 'state');
      mkdirSync(state);
      const at = { cwd: dir.path };
      const slug = await runBin(binPath('runplan'), ['status', '--state-dir', state, '--', 'nosuch'], at);
      assert.is(slug.exitCode, 1, slug.stderr);
      assert.match(slug.stderr, /^runplan: no_such_slug: nosuch has no runs under /m);
      for (const command of [['validate'], ['run', '--dry-run', '--state-dir', state], ['run', '--state-dir', state]]) {
        const r = await runBin(binPath('runplan'), [...command, '--', '-plan.toml'], at);
        assert.is(r.exitCode, 2, r.stderr);
        assert.match(r.stderr, `runplan: missing_file: ${join(dir.path, '-plan.toml')}: cannot read plan`, command.join(' '));
      }
      const extra = await runBin(binPath('runplan'), ['status', '--state-dir', state, '--', 'a', 'b'], at);
      assert.is(extra.exitCode, 2, extra.stderr);
      assert.match(extra.stderr, /^runplan: usage: Unused args: `b`/m);

      const init = await runBin(binPath('journal'), ['init', '--run-id', 'r1', '--', '-j.jsonl'], at);
      assert.is(init.exitCode, 0, init.stderr);
      const cat = await runBin(binPath('journal'), ['cat', '--', '-j.jsonl'], at);
      assert.is(cat.exitCode, 0, cat.stderr);
      assert.match(cat.stdout, /^\{"seq":0,.*"type":"journal-header".*"runId":"r1"/);
      const named = await runBin(binPath('journal'), ['cat', '--', '--version'], at);
      assert.is.not(named.exitCode, 0, named.stdout);
      assert.match(named.stderr, /^journal: missing: --version does not exist/);
      assert.is(named.stdout, '');

      const render = await runBin(binPath('workdir'), ['render', '--var', 'run.id=r1', '--', '-runs/{{run.id}}'], at);
      assert.is(render.exitCode, 0, render.stderr);
      assert.is(render.stdout, '-runs/r1\n');
    } finally {
      dir.cleanup();
    }
  }),
);

// cac hands mri a two-word switch by its camelCase key, so mri took `--dry-run` for an option
// with a value and swallowed the argument after it (kebabSwitches in @runplan/common).
test(
  'a two-word switch before an operand leaves the operand alone, in every tool (--dry-run PLAN, --break-lock FILE, --preserve-status 2s …)',
  withTimeout(60_000, async () => {
    const dir = tempDir();
    try {
      const plan = join(dir.path, 'no-such-plan.toml');
      for (const args of [
        ['run', '--dry-run', plan],
        ['run', '--keep-going', '--new-run', '--dry-run', plan],
      ]) {
        const r = await runBin(binPath('runplan'), args, { cwd: dir.path });
        assert.not.match(r.stderr, /missing required args/, args.join(' '));
        assert.match(r.stderr, plan, `${args.join(' ')}: the plan is the one named`);
      }
      const template = `${join(dir.path, 'runs')}/{{run.id}}`;
      const pruned = await runBin(binPath('workdir'), ['prune', '--dry-run', template, '--retain', '1'], { cwd: dir.path });
      assert.is(pruned.exitCode, 0, pruned.stderr);
      const journal = join(dir.path, 'j.jsonl');
      const appended = await runBin(binPath('journal'), ['append', '--break-lock', journal, '--type', 'note', '--data', '{}'], {
        cwd: dir.path,
      });
      assert.is(appended.exitCode, 0, appended.stderr);
      const settled = await runBin(binPath('settle'), ['--preserve-status', '2s', '/bin/true'], { cwd: dir.path });
      assert.is(settled.exitCode, 125, settled.stderr);
      assert.match(settled.stderr, 'settle [options] -- 2s /bin/true', 'the 2s is named as what it was: an operand');
    } finally {
      dir.cleanup();
    }
  }),
);

// POSIX getopt gives an option that takes a value the next word; mri read `-1` as options.
test(
  "a dash-led value (--jobs -1, --grace -1s, -k -5, --retain -2) is the option's, refused for what it is, by every tool",
  withTimeout(60_000, async () => {
    const cases: Array<[Parameters<typeof binPath>[0], string[], string]> = [
      ['runplan', ['run', 'plan.toml', '--jobs', '-1'], 'runplan: usage: --jobs -1: not a positive integer'],
      ['runplan', ['demo', '--jobs', '-.5'], 'runplan: usage: --jobs -.5: not a positive integer'],
      ['settle', ['--grace', '-1s', '--', 'true'], 'settle: usage: --grace -1s is not a duration'],
      ['settle', ['-k', '-5', '--', 'true'], 'settle: usage: --kill-after -5 is not a duration'],
      ['run-hook', ['--tier', 'pre_run', '--timeout', '-3', '--', 'true'], 'run-hook: usage: --timeout "-3": expected a duration'],
      ['workdir', ['prune', 'x', '--retain', '-2'], 'workdir: bad_retain: --retain "-2" is not a non-negative integer'],
    ];
    for (const [tool, args, said] of cases) {
      const r = await runBin(binPath(tool), args);
      assert.ok(r.exitCode === 2 || r.exitCode === 125, `${tool}: ${r.exitCode} ${r.stderr}`);
      assert.ok(r.stderr.startsWith(said), `${tool} ${args.join(' ')}: ${r.stderr}`);
    }
    // A word that can be an option is still one: the value is missing, not "--json".
    const missing = await runBin(binPath('runplan'), ['status', '--repo', '--json']);
    assert.is(missing.exitCode, 2, missing.stderr);
    assert.match(missing.stderr, /^runplan: usage: option `--repo <dir>` value is missing$/m);
  }),
);

// A single-value option given twice is refused naming it (as settle, run-hook and journal do),
// for every value option each command's --help lists; --retry, meant to repeat, still does.
test(
  'a repeated single-value option is a usage error naming it, for every runplan command; --retry still repeats',
  withTimeout(120_000, async () => {
    const dir = tempDir();
    try {
      const operands: Record<string, string[]> = { run: ['plan.toml'], stop: ['s'], gate: ['claude'] };
      let checked = 0;
      for (const command of ['run', 'validate', 'status', 'log', 'report', 'stop', 'demo', 'gate']) {
        const help = await runBin(binPath('runplan'), [command, '--help']);
        const flags = [...help.stdout.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+) [<[]/gm)].map((m) => m[1]!);
        for (const flag of flags.filter((f) => f !== '--retry')) {
          const args = [command, ...(operands[command] ?? []), flag, '1', `${flag}=2`];
          const r = await runBin(binPath('runplan'), args, { cwd: dir.path });
          assert.is(r.exitCode, 2, `${args.join(' ')}: ${r.stderr}`);
          assert.is(r.stderr, `runplan: usage: ${flag} given 2 times; give it once\n  hint: runplan --help\n`, args.join(' '));
          checked++;
        }
      }
      assert.ok(checked >= 15, `checked ${checked} options`);
      const repo = gitRepo();
      writeFileSync(join(repo.path, 'plan.toml'), 'slug = "p"\n[[tasks]]\nid = "t"\ncommand = ["true"]\n');
      const retry = await runBin(binPath('runplan'), ['run', 'plan.toml', '--dry-run', '--retry', 'nope', '--retry', 'nada'], {
        cwd: repo.path,
      });
      repo.cleanup();
      assert.not.match(retry.stderr, /given 2 times/);
      assert.match(retry.stderr, /^runplan: unknown_task: --retry names no task of .*plan\.toml: nope, nada$/m);
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
