#!/usr/bin/env node
// A second baseline for bench/runplan-makespan.js: bench/runplan-parallel-baseline.sh's work —
// per task the same git commands, attempt directories, mark files, fsyncs and fdatasync'd
// journal appends, `worktree add` and `remove` one at a time — done from one Node process with
// plain `child_process.spawn`, J tasks at a time. Its file operations are as cheap as Node
// makes them: synchronous, except each fsync and fdatasync, which waits on the thread pool so
// the other tasks go on meanwhile. What it shows is the floor of any Node coordinator running
// tasks in parallel: every child is forked from the one Node process, and Node's spawn() holds
// that process's only JavaScript thread for the fork and until the child has exec'd (~2–3 ms on
// this VM, against ~0.2 ms for a fork from sh), so the tasks of a wave start one after another.
// What it leaves out is the same as the shell's: everything runplan does in-process besides.
//
// usage: node runplan-parallel-node-floor.js REPO STATE_DIR N JOBS
import { closeSync, fdatasync, fsync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { run1 as spawnOne } from './floor-spawn.js';

const [repo, state, count, width] = process.argv.slice(2);
const n = Number(count);
const jobs = Number(width);
const run = '20261129T075500Z-0000';
const work = join(state, 'bench', 'work');
const rundir = join(state, 'bench', run);
const ref = 'refs/heads/runplan/bench';
const zero = '0'.repeat(40);

const run1 = (file, args, { cwd = repo, allow = [] } = {}) => spawnOne(file, args, { cwd, allow });
const git = (args, opts) => run1('git', args, opts);
const done = (resolve, reject) => (e) => (e ? reject(e) : resolve());

// fsync a file or directory by path, on the thread pool.
async function syncPath(path) {
  const fd = openSync(path, 'r');
  try {
    await new Promise((resolve, reject) => fsync(fd, done(resolve, reject)));
  } finally {
    closeSync(fd);
  }
}

// `worktree add` and `remove` one at a time, as runplan serializes them.
let worktreeTail = Promise.resolve();
function exclusive(fn) {
  const next = worktreeTail.then(fn);
  worktreeTail = next.catch(() => {});
  return next;
}

mkdirSync(rundir, { recursive: true, mode: 0o700 });
mkdirSync(work, { recursive: true, mode: 0o700 });
const journalFd = openSync(join(rundir, 'journal.jsonl'), 'a', 0o600);
// One journal line, made durable, as journal.append() does (one line, one fdatasync).
const journal = (event) => {
  writeSync(journalFd, `${event}\n`);
  return new Promise((resolve, reject) => fdatasync(journalFd, done(resolve, reject)));
};
// A mark file written and synced (the shell's `echo > mark; sync mark dir…`).
async function mark(dir, ...dirs) {
  writeFileSync(join(dir, '.harness-run-dir'), '{"template":"bench"}\n');
  for (const p of [join(dir, '.harness-run-dir'), dir, ...dirs]) await syncPath(p);
}

await git(['rev-parse', '--show-toplevel']);
await git(['rev-parse', '--path-format=absolute', '--git-common-dir']);
const head = (await git(['rev-parse', '--verify', '--quiet', '--end-of-options', 'main^{commit}'])).out.trim();
await git(['var', 'GIT_COMMITTER_IDENT']);
await git(['var', 'GIT_AUTHOR_IDENT']);
writeFileSync(join(rundir, 'plan.json'), '');
await syncPath(join(rundir, 'plan.json'));
await journal('run-started');
await git(['update-ref', '-m', 'runplan', '--end-of-options', ref, head, zero]);
await journal('branch-updated');

async function task(i) {
  const id = `t${String(i).padStart(2, '0')}`;
  const attempt = join(work, `${run}.${id}.1`);
  const evidence = join(rundir, 'evidence', `${id}.1`);
  const tree = join(attempt, 'tree');
  await journal('attempt-started');
  mkdirSync(attempt, { recursive: true, mode: 0o700 });
  mkdirSync(evidence, { recursive: true, mode: 0o700 });
  await mark(attempt, work);
  await exclusive(() => git(['worktree', 'add', '--detach', '--quiet', '--end-of-options', tree, head]));
  const datadir = join(attempt, '.harness-run', run);
  mkdirSync(datadir, { recursive: true, mode: 0o700 });
  await syncPath(attempt);
  await mark(datadir, join(attempt, '.harness-run'));
  writeFileSync(join(evidence, 'transcript.txt'), '');
  writeFileSync(join(evidence, 'stderr.log'), '');
  await run1('/bin/sleep', ['1'], { cwd: tree });
  await journal('command-settled');
  await git(['-C', tree, 'add', '-A']);
  await git(['-C', tree, 'diff', '--cached', '--quiet']);
  await git(['-C', tree, 'rev-list', '--parents', '-n', '1', '--end-of-options', 'HEAD^{commit}', '--']);
  await journal('integrated');
  await journal('checkpoint');
  await exclusive(() => git(['worktree', 'remove', '--force', '--end-of-options', tree]));
  await journal('attempt-closed');
}

// J workers take the next task as each finishes one (xargs -P J).
let next = 1;
async function worker() {
  while (next <= n) await task(next++);
}
await Promise.all(Array.from({ length: Math.min(jobs, n) }, worker));
await journal('run-complete');
closeSync(journalFd);
