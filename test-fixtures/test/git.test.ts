import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  agentsPath,
  dispatchCounts,
  envWithAgents,
  fixturePlan,
  gitRepo,
  plansPath,
  readLedger,
  tempDir,
  writePlan,
} from '../src/index.js';

test('gitRepo: branch main with one commit, fixed identity, signing/gc/maintenance off', () => {
  const repo = gitRepo();
  try {
    assert.ok(existsSync(join(repo.path, '.git')));
    assert.is(repo.git(['symbolic-ref', '--short', 'HEAD']), 'main');
    assert.is(repo.git(['rev-list', '--count', 'HEAD']), '1');
    assert.is(repo.fileAt('main', 'README.md'), '# fixture repo\n');
    assert.is(repo.git(['log', '-1', '--format=%an <%ae>']), 'Fixture Author <fixture@example.invalid>');
    const config = (key: string) => repo.git(['config', '--local', '--get', key]);
    assert.is(config('commit.gpgsign'), 'false');
    assert.is(config('tag.gpgsign'), 'false');
    assert.is(config('gc.auto'), '0');
    assert.is(config('maintenance.auto'), 'false');
    assert.is(repo.git(['status', '--porcelain']), '');
  } finally {
    repo.cleanup();
  }
});

test('gitRepo: repository hooks never run (a failing pre-commit hook in .git/hooks is ignored)', () => {
  const repo = gitRepo();
  try {
    const hook = join(repo.path, '.git', 'hooks', 'pre-commit');
    mkdirSync(dirname(hook), { recursive: true });
    writeFileSync(hook, '#!/bin/sh\necho hook ran >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const head = repo.commitFiles({ 'a.txt': 'a\n' }, 'add a');
    assert.is(repo.head(), head);
    assert.is(repo.fileAt('HEAD', 'a.txt'), 'a\n');
    assert.is(repo.git(['config', '--get', 'core.hooksPath']), join(repo.path, '.git', 'no-hooks'));
  } finally {
    repo.cleanup();
  }
});

test('gitRepo: head() and fileAt() answer undefined for what does not exist; cleanup removes it all', () => {
  const repo = gitRepo({ files: { 'src/x.txt': 'x\n', 'y.txt': 'y\n' } });
  const top = dirname(repo.path);
  try {
    assert.is(repo.fileAt('HEAD', 'src/x.txt'), 'x\n');
    assert.is(repo.fileAt('HEAD', 'README.md'), undefined);
    assert.is(repo.fileAt('no-such-branch', 'y.txt'), undefined);
    assert.is(repo.head('no-such-branch'), undefined);
    assert.match(repo.head('main')!, /^[0-9a-f]{40}$/);
    assert.throws(() => repo.commitFiles({ '../escape.txt': 'no' }), /outside the repository/);
    assert.throws(() => repo.git(['no-such-subcommand']));
  } finally {
    repo.cleanup();
  }
  assert.not.ok(existsSync(top));
});

test('writePlan copies a fixture plan and the prompt files it names, applying replacements', () => {
  const repo = gitRepo();
  try {
    const file = writePlan(repo.path, 'thirteen');
    assert.is(file, join(repo.path, 'thirteen.toml'));
    assert.is(readFileSync(file, 'utf8'), fixturePlan('thirteen'));
    assert.is(
      readFileSync(join(repo.path, 'prompts', 'thirteen-t13.md'), 'utf8'),
      readFileSync(join(plansPath(), 'prompts', 'thirteen-t13.md'), 'utf8'),
    );

    const other = writePlan(
      repo.path,
      'thirteen.toml',
      { 'release by t13': 'shipped by t13', 'jobs = 3': 'jobs = 1' },
      { dir: 'plans', as: 'p.toml' },
    );
    assert.is(other, join(repo.path, 'plans', 'p.toml'));
    assert.match(readFileSync(other, 'utf8'), /\njobs = 1\n/);
    assert.match(readFileSync(join(repo.path, 'plans', 'prompts', 'thirteen-t13.md'), 'utf8'), /shipped by t13/);

    writePlan(repo.path, 'env');
    assert.is(readFileSync(join(repo.path, 'secrets.env'), 'utf8'), 'API_TOKEN=fixture-secret-token-4242\n');
  } finally {
    repo.cleanup();
  }
});

test('writePlan writes plan text as plan.toml; an unknown fixture name throws', () => {
  const dir = tempDir();
  try {
    const text = 'slug = "inline"\nbase = "main"\n';
    const file = writePlan(dir.path, text);
    assert.is(file, join(dir.path, 'plan.toml'));
    assert.is(readFileSync(file, 'utf8'), text);
    assert.throws(() => writePlan(dir.path, 'no-such-plan'), /no fixture plan named no-such-plan/);
  } finally {
    dir.cleanup();
  }
});

test('envWithAgents puts test-fixtures/agents first on PATH; undefined removes a variable', () => {
  const env = envWithAgents({ MOCK_LEDGER: '/tmp/l', HOME: undefined }, { PATH: '/usr/bin:/bin', HOME: '/root', KEEP: 'k' });
  assert.is(env['PATH'], `${agentsPath()}${delimiter}/usr/bin:/bin`);
  assert.is(env['MOCK_LEDGER'], '/tmp/l');
  assert.is(env['KEEP'], 'k');
  assert.not.ok('HOME' in env);
  assert.is(envWithAgents({ PATH: '/opt/x' })['PATH'], `${agentsPath()}${delimiter}/opt/x`);
  const hermetic = envWithAgents({}, { PATH: '/bin', GIT_DIR: '/elsewhere/.git', GIT_INDEX_FILE: '/x' });
  assert.not.ok('GIT_DIR' in hermetic || 'GIT_INDEX_FILE' in hermetic);
  assert.is(hermetic['GIT_CONFIG_GLOBAL'], '/dev/null');
  assert.is(hermetic['GIT_CONFIG_NOSYSTEM'], '1');
  assert.not.ok('GIT_CONFIG_GLOBAL' in envWithAgents({ GIT_CONFIG_GLOBAL: undefined }));
  const found = execFileSync('sh', ['-c', 'command -v mock-agent'], { env: envWithAgents(), encoding: 'utf8' }).trim();
  assert.is(found, join(agentsPath(), 'mock-agent'));
});

test('readLedger and dispatchCounts: one entry per line, a missing file is no dispatch', () => {
  const dir = tempDir();
  try {
    const ledger = join(dir.path, 'ledger');
    assert.equal(readLedger(ledger), []);
    assert.equal(dispatchCounts(ledger), new Map());
    writeFileSync(ledger, 't01 1 100\nt02 1 101\nt01 2 102\n');
    assert.equal(readLedger(ledger)[2], { task: 't01', attempt: 2, pid: 102 });
    assert.equal(
      dispatchCounts(ledger),
      new Map([
        ['t01', 2],
        ['t02', 1],
      ]),
    );
  } finally {
    dir.cleanup();
  }
});

test.run();
