// status, log, report and stop outside any git work tree: exit 2, not_a_repository, nothing written;
// pointed at a directory that does not exist, or at a state root with no runs, they say so.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gitRepo, runBin, tempDir, withCleanup } from '@runplan/test-fixtures';
import { RUNPLAN } from './support.js';

test(
  'status, log, report and stop outside a repository exit 2 naming not_a_repository',
  withCleanup(
    60_000,
    () => tempDir('runplan-norepo-'),
    async (dir) => {
      for (const args of [['status'], ['log'], ['report'], ['stop', 'x']]) {
        const r = await runBin(RUNPLAN, args, {
          cwd: dir.path,
          env: { ...process.env, GIT_CEILING_DIRECTORIES: dir.path },
          timeoutMs: 30_000,
        });
        assert.is(r.exitCode, 2, `${args[0]}: ${r.stderr}`);
        assert.match(r.stderr, /^runplan: not_a_repository: .* is not inside a git work tree/, args[0]);
      }
      assert.equal(readdirSync(dir.path), [], 'nothing written');
    },
  ),
);

test(
  '--repo naming no directory: not_a_repository says it does not exist (or is not a directory), for status, log, report, stop and run',
  withCleanup(
    60_000,
    () => tempDir('runplan-norepo-'),
    async (dir) => {
      const gone = join(dir.path, 'nonexistent');
      const file = join(dir.path, 'file');
      writeFileSync(file, '');
      const plan = join(dir.path, 'plan.toml');
      writeFileSync(plan, 'slug = "one"\nbase = "HEAD"\n[[tasks]]\nid = "a"\ncommand = ["true"]\n');
      const cases: Array<[string[], string]> = [
        [['status', '--repo', gone], `${gone} does not exist (pass --repo or --state-dir)`],
        [['log', '--repo', gone], `${gone} does not exist`],
        [['report', '--repo', gone], `${gone} does not exist`],
        [['stop', 'x', '--repo', gone], `${gone} does not exist`],
        [['status', '--repo', file], `${file} is not a directory`],
        [['run', plan, '--repo', gone], `${gone} does not exist`],
        [['run', plan, '--repo', gone, '--dry-run'], `${gone} does not exist`],
      ];
      for (const [args, said] of cases) {
        const r = await runBin(RUNPLAN, args, { cwd: dir.path, timeoutMs: 30_000 });
        assert.is(r.exitCode, args[0] === 'run' ? 3 : 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, `runplan: not_a_repository: ${said}`, args.join(' '));
        assert.not.match(r.stderr, 'git work tree', args.join(' '));
        // --repo was given: the hint says to change it, not to pass it.
        if (args[0] === 'run') assert.match(r.stderr, /^ {2}hint: give --repo a directory of a git repository$/m, args.join(' '));
      }
    },
  ),
);

test(
  'status and log with no runs at all say so on one stderr line naming the state root (it does not exist, for a mistyped --state-dir); stdout stays empty, exit 0',
  withCleanup(
    60_000,
    () => gitRepo(),
    async (repo) => {
      const typo = join(repo.path, 'no-such-state');
      const empty = join(repo.path, 'empty-state');
      mkdirSync(empty);
      const cases: Array<[string[], string]> = [
        [[], `runplan: no runs under ${join(repo.path, '.git', 'runplan')} (it does not exist)\n`],
        [['--json'], `runplan: no runs under ${join(repo.path, '.git', 'runplan')} (it does not exist)\n`],
        [['--state-dir', typo], `runplan: no runs under ${typo} (it does not exist)\n`],
        [['--state-dir', empty, '--json'], `runplan: no runs under ${empty}\n`],
      ];
      for (const command of ['status', 'log']) {
        for (const [args, said] of cases) {
          const r = await runBin(RUNPLAN, [command, ...args], { cwd: repo.path, timeoutMs: 30_000 });
          assert.equal([r.exitCode, r.stdout, r.stderr], [0, '', said], `${command} ${args.join(' ')}`);
        }
        const named = await runBin(RUNPLAN, [command, 'nosuch', '--state-dir', empty], { cwd: repo.path, timeoutMs: 30_000 });
        assert.is(named.exitCode, 1, named.stderr);
        assert.match(named.stderr, /^runplan: no_such_slug: nosuch has no runs under /);
      }
    },
  ),
);

test(
  'a plan that cannot be read (missing, a directory) or parsed: the problem line has no empty key path (validate, run, run --dry-run)',
  withCleanup(
    60_000,
    () => gitRepo(),
    async (repo) => {
      const missing = join(repo.path, 'missing.toml');
      const bad = join(repo.path, 'bad.toml');
      writeFileSync(bad, 'x = [\n');
      for (const command of [['validate'], ['run'], ['run', '--dry-run']]) {
        const [name, ...flags] = command;
        const gone = await runBin(RUNPLAN, [name!, missing, ...flags], { cwd: repo.path, timeoutMs: 30_000 });
        assert.is(gone.exitCode, 2, gone.stderr);
        assert.match(gone.stderr, `runplan: missing_file: ${missing}: cannot read plan ${missing}: ENOENT\n`, gone.stderr);
        const folder = await runBin(RUNPLAN, [name!, repo.path, ...flags], { cwd: repo.path, timeoutMs: 30_000 });
        assert.is(folder.exitCode, 2, folder.stderr);
        assert.match(folder.stderr, `runplan: unreadable: ${repo.path}: cannot read plan ${repo.path}: EISDIR\n`, folder.stderr);
        const broken = await runBin(RUNPLAN, [name!, bad, ...flags], { cwd: repo.path, timeoutMs: 30_000 });
        assert.is(broken.exitCode, 2, broken.stderr);
        assert.match(broken.stderr, `runplan: parse_error: ${bad}: ${bad} is not valid TOML`);
        for (const r of [gone, folder, broken]) assert.not.match(r.stderr, ': : ', command.join(' '));
      }
    },
  ),
);

test.run();
