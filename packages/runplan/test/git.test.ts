import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gitRepo, withTimeout } from '@runplan/test-fixtures';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { git, headWithParents, isAncestor, readRef, updateRef } from '../src/host/git.js';

test(
  'git(): stdout without its final newline, a nonzero exit as data, input on stdin',
  withTimeout(30_000, async () => {
    const repo = gitRepo();
    try {
      const head = repo.head('main')!;
      const out = await git(repo.path, ['rev-parse', 'HEAD']);
      assert.equal(out, { code: 0, stdout: head, stderr: '' });
      const bad = await git(repo.path, ['rev-parse', '--verify', '--quiet', 'no-such-ref']);
      assert.is(bad.code, 1);
      const fatal = await git(repo.path, ['cat-file', '-t', 'no-such-object']);
      assert.is(fatal.code, 128);
      assert.match(fatal.stderr, /no-such-object/);
      const batch = await git(repo.path, ['cat-file', '--batch-check'], `${head}\n${'0'.repeat(40)}\n`);
      assert.is(batch.code, 0);
      const [found, missing] = batch.stdout.split('\n');
      assert.match(found!, new RegExp(`^${head} commit \\d+$`));
      assert.is(missing, `${'0'.repeat(40)} missing`);
    } finally {
      repo.cleanup();
    }
  }),
);

test(
  'git(): a spawn failure (missing cwd) is code 128 with the cause on stderr, never a throw',
  withTimeout(30_000, async () => {
    const repo = gitRepo();
    try {
      const out = await git(join(repo.path, 'does-not-exist'), ['rev-parse', 'HEAD']);
      assert.is(out.code, 128);
      assert.match(out.stderr, /ENOENT/);
    } finally {
      repo.cleanup();
    }
  }),
);

test(
  'git(): an inherited GIT_DIR never points plumbing at another repository',
  withTimeout(30_000, async () => {
    const repo = gitRepo();
    const other = gitRepo();
    const saved = process.env.GIT_DIR;
    try {
      other.commitFiles({ 'x.txt': 'x\n' }, 'other');
      process.env.GIT_DIR = join(other.path, '.git');
      const out = await git(repo.path, ['rev-parse', 'HEAD']);
      assert.is(out.stdout, repo.head('main'));
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
      repo.cleanup();
      other.cleanup();
    }
  }),
);

test(
  'git(): a plumbing child still running when the coordinator exits is sent SIGTERM (one process exit listener)',
  withTimeout(30_000, async () => {
    const repo = gitRepo();
    try {
      const pidFile = join(repo.path, 'git.pid');
      // A git alias that records git's pid and then blocks: git() runs it as a plumbing call,
      // and the script exits while it is running.
      const script = `
        const { git } = await import(${JSON.stringify(new URL('../src/host/git.js', import.meta.url).href)});
        const { existsSync, readFileSync } = await import('node:fs');
        void git(${JSON.stringify(repo.path)}, ['-c', 'alias.hang=!echo $PPID > git.pid; exec sleep 60', 'hang']);
        // The whole line, not just the file: the shell creates it before it writes the pid.
        const written = () => existsSync(${JSON.stringify(pidFile)}) && readFileSync(${JSON.stringify(pidFile)}, 'utf8').endsWith('\\n');
        while (!written()) await new Promise((r) => setTimeout(r, 10));
        process.exit(0);
      `;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
      const code = await new Promise((resolve) => child.on('exit', resolve));
      assert.is(code, 0);
      assert.ok(existsSync(pidFile));
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      assert.ok(pid > 0);
      const gone = () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      };
      while (!gone()) await sleep(20);
    } finally {
      repo.cleanup();
    }
  }),
);

test(
  'isAncestor: a revision starting with "-" is refused (false), never read as an option',
  withTimeout(30_000, async () => {
    const repo = gitRepo();
    try {
      const base = repo.head('main')!;
      const next = repo.commitFiles({ 'a.txt': 'a\n' }, 'a');
      assert.is(await isAncestor(repo.path, base, next), true);
      assert.is(await isAncestor(repo.path, next, base), false);
      assert.is(await isAncestor(repo.path, base, base), true);
      // As options these would change what merge-base does (--all, --octopus) or print help.
      for (const evil of ['--all', '--octopus', '-h', '--help', '--fork-point', '-']) {
        assert.is(await isAncestor(repo.path, evil, next), false, `${evil} as the ancestor`);
        assert.is(await isAncestor(repo.path, base, evil), false, `${evil} as the descendant`);
      }
      // Not a commit at all: git could not say, which every caller treats as not proven.
      assert.is.not(await isAncestor(repo.path, base, 'no-such-rev'), true);
      // A NUL byte cannot reach git (spawn refuses the argv): code 128, never a rejection.
      assert.is.not(await isAncestor(repo.path, base, `${next}\0--all`), true);
      assert.is((await git(repo.path, ['rev-parse', 'a\0b'])).code, 128);
    } finally {
      repo.cleanup();
    }
  }),
);

test(
  'headWithParents: HEAD and its parents from one rev-list (root, plain, merge), undefined without HEAD',
  withTimeout(30_000, async () => {
    const repo = gitRepo();
    const empty = gitRepo();
    try {
      const root = repo.head('main')!;
      assert.equal(await headWithParents(repo.path), {
        head: root,
        parents: repo.git(['rev-list', '--parents', '-n', '1', 'HEAD']).split(' ').slice(1),
      });
      const a = repo.commitFiles({ 'a.txt': 'a\n' }, 'a');
      assert.equal(await headWithParents(repo.path), { head: a, parents: [root] });
      repo.git(['checkout', '-q', '-b', 'side', root]);
      const b = repo.commitFiles({ 'b.txt': 'b\n' }, 'b');
      repo.git(['checkout', '-q', 'main']);
      repo.git(['merge', '-q', '--no-ff', '--no-edit', 'side']);
      const merge = repo.head('main')!;
      assert.equal(await headWithParents(repo.path), { head: merge, parents: [a, b] });
      const unborn = join(empty.path, 'unborn');
      empty.git(['init', '-q', unborn]);
      assert.is(await headWithParents(unborn), undefined);
    } finally {
      repo.cleanup();
      empty.cleanup();
    }
  }),
);

test(
  'updateRef: compare-and-swap; a ref name starting with "-" is a ref, not an option',
  withTimeout(30_000, async () => {
    const repo = gitRepo();
    try {
      const base = repo.head('main')!;
      const next = repo.commitFiles({ 'a.txt': 'a\n' }, 'a');
      const created = await updateRef(repo.path, 'refs/heads/runplan/x', base, null);
      assert.ok(created.ok);
      const stale = await updateRef(repo.path, 'refs/heads/runplan/x', next, next);
      assert.ok(!stale.ok && stale.error.reason === 'ref_moved' && stale.error.actual === base);
      const moved = await updateRef(repo.path, 'refs/heads/runplan/x', next, base);
      assert.ok(moved.ok);
      assert.is(await readRef(repo.path, 'refs/heads/runplan/x'), next);
      // Without --end-of-options this would be update-ref's --stdin mode.
      const dashed = await updateRef(repo.path, '--stdin', next, null);
      assert.ok(dashed.ok);
      assert.is(await readRef(repo.path, '--stdin'), next, 'written as a ref named --stdin');
    } finally {
      repo.cleanup();
    }
  }),
);

test.run();
