// An attempt's evidence write the file system refuses for permission (EPERM, EACCES) or a
// read-only mount (EROFS) is the host's doing, through the bin: class environment, reason
// state_unwritable naming the errno and the file, never retried — not an engine error. Here
// the task's command makes its own evidence dir immutable (chattr +i, as root), so the gate's
// log cannot be written after it.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { envWithAgents, gitRepo } from '@runplan/test-fixtures';
import { ofType, records, runplan, slugDir } from './support.js';

const PLAN = `slug = "evidence"
base = "main"
[defaults]
command = ["sh", "-c", "cat >/dev/null; chattr +i \\"$(git rev-parse --path-format=absolute --git-common-dir)/runplan/evidence/{{run.id}}/evidence/{{task.id}}.{{run.attempt}}\\""]
format = "text"
deadline = "1m"
expect = "none"
gates = [["sh", "-c", "echo the gate says no; exit 1"]]
[[tasks]]
id = "a"
prompt = "lock the evidence"
`;

test('a gate log the file system refuses (EPERM): state_unwritable, class environment, phase gates, not retried', async () => {
  const repo = gitRepo();
  // The immutable dirs made mutable again, so the repo can be removed (none when no run got that far).
  const unlock = () => {
    const runs = slugDir(repo, 'evidence');
    if (!existsSync(runs)) return;
    for (const run of readdirSync(runs).filter((n) => existsSync(join(runs, n, 'evidence'))))
      for (const dir of readdirSync(join(runs, run, 'evidence'))) execFileSync('chattr', ['-i', join(runs, run, 'evidence', dir)]);
  };
  try {
    const file = join(repo.path, 'plan.toml');
    writeFileSync(file, PLAN);
    const r = await runplan(['run', file], { env: envWithAgents({}), repo });
    assert.is(r.exitCode, 1, r.stderr);
    assert.match(
      r.stderr,
      /runplan: state_unwritable: task a, phase gates, class environment: EPERM: cannot write \S+\/evidence\/a\.1\/gate-1\.log: /,
    );
    const rs = await records(repo, 'evidence');
    const receipt = ofType(rs, 'run-failed')[0]!;
    assert.is(receipt.reason, 'state_unwritable');
    assert.is(receipt.class, 'environment');
    assert.is(ofType(rs, 'attempt-started').length, 1, 'not retried');
  } finally {
    unlock();
    repo.cleanup();
  }
});

test.run();
