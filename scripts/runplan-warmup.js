// runplan's warm-up for its code cache (scripts/code-cache.js --warmup): `runplan run` of a
// two-task plan (each task a `touch`, committed and landed) in a scratch repository, then
// `runplan status`, so the cache holds what a run and a look at it compile. Returns the first
// nonzero exit code, else 0; the scratch directory is removed either way.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

export default async function warmup(main) {
  const dir = mkdtempSync(join(tmpdir(), 'runplan-warmup-'));
  try {
    const repo = join(dir, 'repo');
    git(dir, ['init', '-q', '-b', 'main', repo]);
    git(repo, ['-c', 'user.name=warmup', '-c', 'user.email=warmup@localhost', 'commit', '-q', '--allow-empty', '-m', 'init']);
    git(repo, ['config', 'user.name', 'warmup']);
    git(repo, ['config', 'user.email', 'warmup@localhost']);
    writeFileSync(join(dir, 'plan.toml'), plan);
    const run = await main(['run', join(dir, 'plan.toml'), '--repo', repo]);
    if (run !== 0) return run;
    return await main(['status', '--repo', repo]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function git(cwd, args) {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.trim()}`);
}
