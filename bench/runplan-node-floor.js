#!/usr/bin/env node
// A second baseline for bench/runplan-overhead.js: bench/runplan-baseline.sh's work — the same
// git commands in the same order, the same directories and mark files, the same fdatasync and
// fsync calls — done from one Node process with plain `child_process.spawn`, one command at a
// time. What it shows is the floor of any Node coordinator: each of a task's 8 children is
// forked from a Node process (~1–1.5 ms a fork on this VM, the parent blocked until the exec)
// instead of from sh (~0.2 ms). What it leaves out is the same as the shell's: plan validation,
// digests, CRCs, settle's ownership (cgroups, identity reads), templates, progress.
//
// usage: node runplan-node-floor.js REPO STATE_DIR N
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { run1 as spawnOne } from './floor-spawn.js';

const [repo, state, count] = process.argv.slice(2);
const n = Number(count);
const run = '20261129T075500Z-0000';
const work = join(state, 'bench', 'work');
const rundir = join(state, 'bench', run);
const ref = 'refs/heads/runplan/bench';
const zero = '0'.repeat(40);

const run1 = (file, args, { cwd = repo, allow = [] } = {}) => spawnOne(file, args, { cwd, allow });
const git = (args, opts) => run1('git', args, opts);

// fsync a file or directory by path.
function syncPath(path) {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

mkdirSync(rundir, { recursive: true, mode: 0o700 });
mkdirSync(work, { recursive: true, mode: 0o700 });
const journalFd = openSync(join(rundir, 'journal.jsonl'), 'a', 0o600);
// One journal line, made durable, as journal.append() does.
const journal = (event) => {
  writeSync(journalFd, `${event}\n`);
  fdatasyncSync(journalFd);
};
// A mark file written and synced (the shell's `echo > mark; sync mark dir…`).
const mark = (dir, ...dirs) => {
  writeFileSync(join(dir, '.harness-run-dir'), '{"template":"bench"}\n');
  for (const p of [join(dir, '.harness-run-dir'), dir, ...dirs]) syncPath(p);
};

await git(['rev-parse', '--show-toplevel']);
await git(['rev-parse', '--path-format=absolute', '--git-common-dir']);
let head = (await git(['rev-parse', '--verify', '--quiet', '--end-of-options', 'main^{commit}'])).out.trim();
await git(['var', 'GIT_COMMITTER_IDENT']);
await git(['var', 'GIT_AUTHOR_IDENT']);
writeFileSync(join(rundir, 'plan.json'), '');
syncPath(join(rundir, 'plan.json'));
journal('run-started');
await git(['update-ref', '-m', 'runplan', '--end-of-options', ref, head, zero]);
journal('branch-updated');
for (let i = 1; i <= n; i++) {
  const task = `t${String(i).padStart(2, '0')}`;
  const attempt = join(work, `${run}.${task}.1`);
  const evidence = join(rundir, 'evidence', `${task}.1`);
  const tree = join(attempt, 'tree');
  journal('attempt-started');
  mkdirSync(attempt, { recursive: true, mode: 0o700 });
  mkdirSync(evidence, { recursive: true, mode: 0o700 });
  mark(attempt, work);
  await git(['worktree', 'add', '--detach', '--quiet', '--end-of-options', tree, head]);
  const datadir = join(attempt, '.harness-run', run);
  mkdirSync(datadir, { recursive: true, mode: 0o700 });
  syncPath(attempt);
  mark(datadir, join(attempt, '.harness-run'));
  writeFileSync(join(evidence, 'transcript.txt'), '');
  writeFileSync(join(evidence, 'stderr.log'), '');
  await run1('/usr/bin/touch', [`${task}.txt`], { cwd: tree });
  journal('command-settled');
  await git(['-C', tree, 'add', '-A']);
  const staged = await git(['-C', tree, 'diff', '--cached', '--quiet'], { allow: [1] });
  if (staged.code === 1) await git(['-C', tree, 'commit', '--quiet', '-m', `runplan: ${task} (run ${run}, attempt 1)`]);
  const [result, ...parents] = (await git(['-C', tree, 'rev-list', '--parents', '-n', '1', '--end-of-options', 'HEAD^{commit}', '--'])).out
    .trim()
    .split(' ');
  if (!parents.includes(head)) await git(['-C', tree, 'merge-base', '--is-ancestor', '--end-of-options', head, result]);
  journal('integrated');
  journal('checkpoint');
  await git(['update-ref', '-m', 'runplan', '--end-of-options', ref, result, head]);
  journal('branch-updated');
  await git(['worktree', 'remove', '--force', '--end-of-options', tree]);
  journal('attempt-closed');
  head = result;
}
journal('run-complete');
closeSync(journalFd);
