// runplan's warm-up for its code cache (scripts/code-cache.js --warmup): `runplan run` of a
// two-task plan (each task a `touch`, committed and landed) in a scratch repository, then
// `runplan status`, so the cache holds what a run and a look at it compile. Returns the first
// nonzero exit code, else 0; the scratch directory is removed either way. As `runplan demo`
// does, the repository ignores the builder's git configuration (a global `commit.gpgsign` or
// `core.hooksPath` would fail or stall the build): no system or global config, no hooks,
// gc off — for the git the runs start too (the environment of this build step's process).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const plan = `slug = "warmup"
base = "main"

[defaults]
command = ["touch", "{{task.id}}.txt"]
format = "text"
deadline = "1m"

[[tasks]]
id = "one"
expect = "commit"

[[tasks]]
id = "two"
expect = "commit"
`;

const GIT_ISOLATION = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };

export default async function warmup(main) {
  const dir = mkdtempSync(join(tmpdir(), 'runplan-warmup-'));
  Object.assign(process.env, GIT_ISOLATION);
  try {
    const repo = join(dir, 'repo');
    mkdirSync(join(dir, 'no-hooks'));
    git(dir, ['init', '-q', '-b', 'main', repo]);
    for (const [key, value] of [
      ['user.name', 'warmup'],
      ['user.email', 'warmup@localhost'],
      ['commit.gpgsign', 'false'],
      ['gc.auto', '0'],
      ['core.hooksPath', join(dir, 'no-hooks')],
    ])
      git(repo, ['config', key, value]);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'init']);
    writeFileSync(join(dir, 'plan.toml'), plan);
    const run = await main(['run', join(dir, 'plan.toml'), '--repo', repo]);
    if (run !== 0) return run;
    return await main(['status', '--repo', repo]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function git(cwd, args) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_ISOLATION } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.trim()}`);
}
