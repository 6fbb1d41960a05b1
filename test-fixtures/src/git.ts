import { execFileSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { tempDir } from './helpers.js';

const root = join(import.meta.dirname, '..', '..');

/** Absolute path of test-fixtures/agents (mock-agent, mock-gate, mock-verify). */
export function agentsPath(): string {
  return join(root, 'agents');
}

/** Absolute path of a real agent transcript in test-fixtures/transcripts (see its README). */
export function transcriptPath(name: string): string {
  return join(root, 'transcripts', name);
}

/** Absolute path of test-fixtures/plans. */
export function plansPath(): string {
  return join(root, 'plans');
}

// Variables that point git at some other repository or index: inherited from a parent
// (a git hook running the tests), they would make every fixture repo someone else's.
const GIT_REDIRECTS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_PREFIX',
  'GIT_NAMESPACE',
];

// An environment whose PATH starts with test-fixtures/agents, so plans can name
// `mock-agent`, `mock-gate` and `mock-verify` bare. git is made hermetic (no system or
// global config, no inherited GIT_DIR & co.) so fixture repos behave the same on every
// machine. `extra` wins over all of that; an `undefined` value removes the variable.
export function envWithAgents(
  extra: Record<string, string | undefined> = {},
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) if (value !== undefined && !GIT_REDIRECTS.includes(name)) env[name] = value;
  env['GIT_CONFIG_NOSYSTEM'] = '1';
  env['GIT_CONFIG_GLOBAL'] = '/dev/null';
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const path = extra['PATH'] ?? env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin';
  env['PATH'] = `${agentsPath()}${delimiter}${path}`;
  return env;
}

/** Environment for git in fixture repos: no system/global config, fixed identity and dates off. */
export function gitEnv(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) if (value !== undefined && !name.startsWith('GIT_')) env[name] = value;
  env['GIT_CONFIG_NOSYSTEM'] = '1';
  env['GIT_CONFIG_GLOBAL'] = '/dev/null';
  env['GIT_TERMINAL_PROMPT'] = '0';
  return env;
}

export interface GitRepo {
  /** Real path of the repository's working tree. */
  path: string;
  /** Removes the repository (and everything in its temp dir). */
  cleanup(): void;
  /** Runs git in the repo and returns stdout without its trailing newline; throws on a nonzero exit. */
  git(args: readonly string[], options?: { cwd?: string; input?: string }): string;
  /** Commit id of `ref` (default HEAD), or undefined when it does not resolve. */
  head(ref?: string): string | undefined;
  /** Content of `file` at `ref`, or undefined when the ref or the file does not exist. */
  fileAt(ref: string, file: string): string | undefined;
  /** Writes `files` (relative paths) into the working tree and commits them on the current branch. */
  commitFiles(files: Readonly<Record<string, string>>, message?: string): string;
}

export interface GitRepoOptions {
  /** Temp dir name prefix. */
  prefix?: string;
  /** Files of the initial commit (default: README.md). */
  files?: Readonly<Record<string, string>>;
}

// A throwaway repository in a temp dir: branch `main` with one commit, a fixed identity,
// and nothing that makes git behave differently from one machine to the next (signing,
// gc, maintenance, hooks, autocrlf, global and system config).
export function gitRepo(options: GitRepoOptions = {}): GitRepo {
  const dir = tempDir(options.prefix ?? 'runplan-repo-');
  const path = join(dir.path, 'repo');
  mkdirSync(path);
  const env = gitEnv();
  const git = (args: readonly string[], opts: { cwd?: string; input?: string } = {}): string => {
    const out = execFileSync('git', [...args], {
      cwd: opts.cwd ?? path,
      env,
      input: opts.input ?? '',
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
    });
    return out.endsWith('\n') ? out.slice(0, -1) : out;
  };
  const tryGit = (args: readonly string[]): string | undefined => {
    try {
      return git(args);
    } catch {
      return undefined;
    }
  };
  try {
    git(['init', '-q', '-b', 'main']);
    const hooks = join(path, '.git', 'no-hooks');
    mkdirSync(hooks);
    // Written straight into .git/config: one file write instead of a git process per key.
    const quote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    appendFileSync(
      join(path, '.git', 'config'),
      [
        '[user]',
        '\tname = Fixture Author',
        '\temail = fixture@example.invalid',
        '[commit]',
        '\tgpgsign = false',
        '[tag]',
        '\tgpgsign = false',
        '[gc]',
        '\tauto = 0',
        '[maintenance]',
        '\tauto = false',
        '[core]',
        `\thooksPath = ${quote(hooks)}`,
        '\tautocrlf = false',
        '\tfsmonitor = false',
        '[advice]',
        '\tdetachedHead = false',
        '[init]',
        '\tdefaultBranch = main',
        '',
      ].join('\n'),
    );
    const files = options.files ?? { 'README.md': '# fixture repo\n' };
    for (const [file, text] of Object.entries(files)) writeInTree(path, file, text);
    git(['add', '-A']);
    git(['commit', '-q', '--allow-empty', '-m', 'initial commit']);
  } catch (e) {
    dir.cleanup();
    throw e;
  }
  return {
    path,
    cleanup: dir.cleanup,
    git,
    head: (ref = 'HEAD') => tryGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]),
    fileAt: (ref, file) => {
      try {
        return execFileSync('git', ['show', `${ref}:${file}`], { cwd: path, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      } catch {
        return undefined;
      }
    },
    commitFiles: (files, message = 'fixture change') => {
      for (const [file, text] of Object.entries(files)) writeInTree(path, file, text);
      git(['add', '-A']);
      git(['commit', '-q', '-m', message]);
      return git(['rev-parse', 'HEAD']);
    },
  };
}

function writeInTree(treeDir: string, file: string, text: string): void {
  const target = resolve(treeDir, file);
  if (relative(treeDir, target).startsWith('..') || isAbsolute(relative(treeDir, target))) {
    throw new Error(`gitRepo: ${file} is outside the repository`);
  }
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
}

export interface WritePlanOptions {
  /** File name of the plan inside the repo (default: the fixture's name, or `plan.toml`). */
  as?: string;
  /** Directory inside the repo for the plan (default: the repo root). */
  dir?: string;
}

// Writes a plan into a fixture repo and returns its absolute path. `plan` is the name of a
// fixture in test-fixtures/plans (`thirteen` or `thirteen.toml`) or the plan text itself
// (anything containing a newline). Every `prompt_file`/`env_file` the plan names is copied
// beside it from test-fixtures/plans when it exists there. `replacements` are literal
// substitutions applied to the plan and to the copied files, in order.
export function writePlan(
  repoDir: string,
  plan: string,
  replacements: Readonly<Record<string, string>> = {},
  options: WritePlanOptions = {},
): string {
  const isText = plan.includes('\n');
  let text: string;
  let name: string;
  if (isText) {
    text = plan;
    name = options.as ?? 'plan.toml';
  } else {
    const file = fixturePlanFile(plan);
    text = readFileSync(file, 'utf8');
    name = options.as ?? (file.endsWith('.json') ? `${baseName(plan)}.json` : `${baseName(plan)}.toml`);
  }
  const apply = (s: string): string => {
    let out = s;
    for (const [from, to] of Object.entries(replacements)) out = out.split(from).join(to);
    return out;
  };
  text = apply(text);
  const planDir = options.dir === undefined ? repoDir : join(repoDir, options.dir);
  mkdirSync(planDir, { recursive: true });
  for (const ref of referencedFiles(text)) {
    const source = join(plansPath(), ref);
    const target = join(planDir, ref);
    if (isAbsolute(ref) || existsSync(target) || !existsSync(source)) continue;
    mkdirSync(dirname(target), { recursive: true });
    if (Object.keys(replacements).length === 0) copyFileSync(source, target);
    else writeFileSync(target, apply(readFileSync(source, 'utf8')));
  }
  const planFile = join(planDir, name);
  writeFileSync(planFile, text);
  return planFile;
}

/** The text of a fixture plan, e.g. `fixturePlan('thirteen')`. */
export function fixturePlan(name: string): string {
  return readFileSync(fixturePlanFile(name), 'utf8');
}

function fixturePlanFile(name: string): string {
  for (const candidate of [name, `${name}.toml`, `${name}.json`]) {
    const file = join(plansPath(), candidate);
    if (existsSync(file) && !candidate.includes('..')) return file;
  }
  throw new Error(`writePlan: no fixture plan named ${name} in ${plansPath()}`);
}

function baseName(name: string): string {
  return name.replace(/\.(toml|json)$/, '');
}

// prompt_file / env_file values named in a plan (TOML `key = "value"` or JSON `"key": "value"`).
function referencedFiles(text: string): string[] {
  const refs: string[] = [];
  const re = /"?(?:prompt_file|env_file)"?\s*[=:]\s*["']([^"'\n]+)["']/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) refs.push(m[1]!);
  return refs;
}
