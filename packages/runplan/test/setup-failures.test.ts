// An attempt whose setup fails for a reason of the machine, not of the task, through the
// bin: the attempt dir cannot be made (workdir_failed) or `git worktree add` fails
// (worktree_failed: here a post-checkout hook that refuses). Each is class environment: the
// run fails at once (exit 1), the task's command never runs, and it is not retried.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { envWithAgents, gitRepo, tempDir } from '@runplan/test-fixtures';
import { ofType, records, runplan } from './support.js';

const plan = (top: string): string => `slug = "setup"
base = "main"
${top}
[defaults]
command = ["sh", "-c", "cat >/dev/null; touch ran.txt"]
format = "text"
deadline = "1m"
[[tasks]]
id = "a"
prompt = "make ran.txt"
`;

async function expectSetupFailure(top: string, prepare: (repo: string, scratch: string) => void, reason: string, detail: RegExp) {
  const repo = gitRepo();
  const scratch = tempDir('runplan-setup-');
  try {
    prepare(repo.path, scratch.path);
    const file = join(repo.path, 'plan.toml');
    writeFileSync(file, plan(top.replaceAll('SCRATCH', scratch.path)));
    const r = await runplan(['run', file], { env: envWithAgents({}), repo });
    assert.is(r.exitCode, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`runplan: ${reason}: task a, phase setup, class environment: `));
    assert.match(r.stderr, detail);
    const rs = await records(repo, 'setup');
    assert.is(ofType(rs, 'attempt-started').length, 1, 'not retried');
    assert.is(ofType(rs, 'command-settled').length, 0, 'the command never ran');
    assert.is(ofType(rs, 'run-failed')[0]?.reason, reason);
  } finally {
    repo.cleanup();
    scratch.cleanup();
  }
}

test('workdir under a regular file: workdir_failed, exit 1, the command never runs', async () => {
  await expectSetupFailure(
    'workdir = "SCRATCH/a-file/{{run.id}}.{{task.id}}.{{run.attempt}}"',
    (_repo, scratch) => writeFileSync(join(scratch, 'a-file'), 'not a directory\n'),
    'workdir_failed',
    /a-file: it exists and is not a directory \(EEXIST\)/,
  );
});

test('a post-checkout hook that refuses: worktree_failed naming git worktree add and the hook’s stderr', async () => {
  await expectSetupFailure(
    '',
    (repo) => {
      // The fixture repo's core.hooksPath (an empty dir, so no hook runs by accident).
      const hooks = join(repo, '.git', 'no-hooks');
      mkdirSync(hooks, { recursive: true });
      writeFileSync(join(hooks, 'post-checkout'), '#!/bin/sh\necho "post-checkout refuses" >&2\nexit 1\n');
      chmodSync(join(hooks, 'post-checkout'), 0o755);
    },
    'worktree_failed',
    /git worktree add: exit 1: post-checkout refuses/,
  );
});

test.run();
