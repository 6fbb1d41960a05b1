import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { execa } from 'execa';

/** Where `runplan demo` set things up: a scratch repo with the bundled plan and mock agents. */
export interface DemoSetup {
  dir: string;
  repo: string;
  planFile: string;
  /** PATH with the mock agents first (the coordinator's children inherit it). */
  path: string;
}

export type DemoError = { reason: 'fixtures_missing'; message: string } | { reason: 'git_failed'; message: string };

// The bundled example, shipped in this package at dist/demo (copied from the monorepo's
// test-fixtures at build): the 13-task plan, its prompts, the mock agents it runs.
export function fixturesRoot(): string | undefined {
  const candidate = join(import.meta.dirname, '..', 'demo');
  return existsSync(join(candidate, 'plans', 'thirteen.toml')) && existsSync(join(candidate, 'agents', 'mock-agent'))
    ? candidate
    : undefined;
}

// Creates a temp dir with a fresh git repository (branch main, one commit, no hooks, no
// signing) holding the 13-task plan and its prompts, committed.
export async function prepareDemo(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ok: true; value: DemoSetup } | { ok: false; error: DemoError }> {
  const fixtures = fixturesRoot();
  if (fixtures === undefined) {
    return {
      ok: false,
      error: {
        reason: 'fixtures_missing',
        message: 'the bundled example (dist/demo/plans/thirteen.toml, agents/mock-agent) is not in this package',
      },
    };
  }
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'runplan-demo-')));
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, '.git-no-hooks'), { recursive: true });
  const gitEnv: Record<string, string | undefined> = {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_DIR: undefined,
    GIT_WORK_TREE: undefined,
  };
  const git = (args: string[]) => execa('git', args, { cwd: repo, env: gitEnv, extendEnv: true, stdin: 'ignore' });
  try {
    await git(['init', '-q', '-b', 'main']);
    for (const [key, value] of [
      ['user.name', 'runplan demo'],
      ['user.email', 'demo@runplan.invalid'],
      ['commit.gpgsign', 'false'],
      ['gc.auto', '0'],
      ['core.hooksPath', join(dir, 'no-hooks')],
      ['advice.detachedHead', 'false'],
    ] as const) {
      await git(['config', key, value]);
    }
    writeFileSync(join(repo, 'README.md'), '# runplan demo\n\nA scratch repository for `runplan demo`.\n');
    writeFileSync(join(repo, '.gitignore'), '.git-no-hooks/\n');
    cpSync(join(fixtures, 'plans', 'thirteen.toml'), join(repo, 'thirteen.toml'));
    cpSync(join(fixtures, 'plans', 'prompts'), join(repo, 'prompts'), { recursive: true });
    await git(['add', '-A']);
    await git(['commit', '-q', '-m', 'demo: the 13-task plan']);
  } catch (e) {
    // Nothing of a scratch repository that could not be made is worth keeping.
    rmSync(dir, { recursive: true, force: true });
    return { ok: false, error: { reason: 'git_failed', message: e instanceof Error ? e.message.split('\n')[0]! : String(e) } };
  }
  const path = `${join(fixtures, 'agents')}${delimiter}${env.PATH ?? '/usr/bin:/bin'}`;
  return { ok: true, value: { dir, repo, planFile: join(repo, 'thirteen.toml'), path } };
}
