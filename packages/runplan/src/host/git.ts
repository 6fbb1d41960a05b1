import { err, ok, type Result } from '@runplan/common';
import { capture, type Captured } from '@runplan/settle';
import { FULL_SHA, GIT_DEADLINE_MS, git, scrubbedGitEnv, ZERO_SHA } from './git-spawn.js';

// What runplan asks git, and the git commands it runs through settle. The plumbing spawn
// itself (environment scrub, deadline, output cap, exit listener) is in git-spawn.ts.

export { GIT_DEADLINE_MS, git, type GitOutput, scrubbedGitEnv, ZERO_SHA } from './git-spawn.js';

// The top level of the work tree containing `dir`.
export async function toplevel(dir: string): Promise<string | undefined> {
  const out = await git(dir, ['rev-parse', '--show-toplevel']);
  return out.code === 0 && out.stdout !== '' ? out.stdout : undefined;
}

// The absolute common git dir (shared by every worktree of the repository).
export async function commonDir(repo: string): Promise<string | undefined> {
  const out = await git(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  return out.code === 0 && out.stdout !== '' ? out.stdout : undefined;
}

// The commit a revision names, or undefined when it names none.
export async function resolveCommit(cwd: string, rev: string): Promise<string | undefined> {
  const out = await git(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  return out.code === 0 && /^[0-9a-f]{40,64}$/.test(out.stdout) ? out.stdout : undefined;
}

// The value of a full ref name (refs/heads/...), or undefined when it does not exist.
export async function readRef(cwd: string, ref: string): Promise<string | undefined> {
  const out = await git(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', ref]);
  return out.code === 0 && out.stdout !== '' ? out.stdout : undefined;
}

// A worktree's HEAD commit and its parents, from one `git rev-list --parents -n 1` (undefined:
// no HEAD commit). A commit is its parents' descendant, so a caller that finds the base it
// expects among `parents` has its ancestry proven without a `merge-base`.
export async function headWithParents(cwd: string): Promise<{ head: string; parents: string[] } | undefined> {
  const out = await git(cwd, ['rev-list', '--parents', '-n', '1', '--end-of-options', 'HEAD^{commit}', '--']);
  if (out.code !== 0) return undefined;
  const [head, ...parents] = out.stdout.split(' ');
  if (head === undefined || !FULL_SHA.test(head) || !parents.every((p) => FULL_SHA.test(p))) return undefined;
  return { head, parents };
}

// Which of many objects exist, asked of one `git cat-file --batch-check` process.
export async function missingObjects(cwd: string, shas: readonly string[]): Promise<string[]> {
  if (shas.length === 0) return [];
  const out = await git(cwd, ['cat-file', '--batch-check'], shas.join('\n') + '\n');
  const lines = out.stdout.split('\n');
  return shas.filter((_sha, i) => lines[i] === undefined || lines[i]!.endsWith(' missing'));
}

// Whether `ancestor` is `descendant` or one of its ancestors (undefined: git could not say).
// Revisions come from journals and plans: one that starts with '-' names no commit and is
// never passed to git (false), and `--end-of-options` keeps any other from reading as an option.
export async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean | undefined> {
  if (ancestor.startsWith('-') || descendant.startsWith('-')) return false;
  const out = await git(cwd, ['merge-base', '--is-ancestor', '--end-of-options', ancestor, descendant]);
  if (out.code === 0) return true;
  if (out.code === 1) return false;
  return undefined;
}

/**
 * Answers "is `a` `b` or one of its ancestors?" for many pairs from ONE git process:
 * `git rev-list --topo-order --parents <tips> ^<floor>` gives the commits reachable from
 * some tip but not from `floor`, each with its parents, descendants listed before
 * ancestors. For a pair with `floor <= a` (a is the floor or descends from it), every
 * commit on a path from `b` down to `a` other than the floor descends from the floor, so
 * is in that graph; the walk from `b` never leaves it and never goes below `a`'s position.
 * The caller guarantees `floor <= a` (resume walks a chain up from its base commit, and
 * every link it accepted was proven); a `true` is always a real parent path. Pairs the
 * graph cannot place, and a failed rev-list, give undefined (ask `isAncestor` instead).
 */
export type AncestryOracle = (a: string, b: string) => boolean | undefined;

export async function ancestryOracle(cwd: string, floor: string, tips: readonly string[]): Promise<AncestryOracle | undefined> {
  if (!FULL_SHA.test(floor)) return undefined;
  const heads = [...new Set(tips.filter((t) => FULL_SHA.test(t) && t !== floor))];
  if (heads.length === 0) return (a, b) => (a === b && a === floor ? true : undefined);
  const out = await git(cwd, ['rev-list', '--topo-order', '--parents', '--stdin'], [...heads, `^${floor}`].join('\n') + '\n');
  if (out.code !== 0) return undefined;
  const asked = new Set(heads);
  const position = new Map<string, number>();
  const parents: string[][] = [];
  for (const line of out.stdout.split('\n')) {
    if (line === '') continue;
    const [sha, ...ps] = line.split(' ');
    if (sha === undefined || !FULL_SHA.test(sha)) return undefined;
    position.set(sha, parents.length);
    parents.push(ps);
  }
  return (a, b) => {
    if (a === b) return FULL_SHA.test(a) && (a === floor || position.has(a)) ? true : undefined;
    const limit = a === floor ? Infinity : position.get(a);
    if (limit === undefined) return undefined;
    const start = position.get(b);
    // A tip outside the graph is the floor or below it, so it cannot descend from a (a is
    // the floor or above it, and a !== b); a commit that was no tip gives no answer.
    if (start === undefined) return b === floor || asked.has(b) ? false : undefined;
    if (start >= limit) return false;
    const seen = new Set<number>([start]);
    const stack = [start];
    while (stack.length > 0) {
      const at = stack.pop()!;
      for (const p of parents[at]!) {
        if (p === a) return true;
        const i = position.get(p);
        if (i === undefined || i >= limit || seen.has(i)) continue;
        seen.add(i);
        stack.push(i);
      }
    }
    return false;
  };
}

export interface RefMoved {
  reason: 'ref_moved';
  ref: string;
  expected: string | null;
  actual: string | null;
  message: string;
}

// Moves a ref with compare-and-swap: only if it still holds `old` (null: must not exist).
export async function updateRef(cwd: string, ref: string, next: string, old: string | null): Promise<Result<void, RefMoved>> {
  const out = await git(cwd, ['update-ref', '-m', 'runplan', '--end-of-options', ref, next, old ?? ZERO_SHA]);
  if (out.code === 0) return ok(undefined);
  const actual = (await readRef(cwd, ref)) ?? null;
  return err({ reason: 'ref_moved', ref, expected: old, actual, message: out.stderr.trim() });
}

// Whether a commit identity is configured; when not, runplan's own commits use a fallback.
export async function identityEnv(repo: string): Promise<Record<string, string>> {
  const [out, author] = await Promise.all([git(repo, ['var', 'GIT_COMMITTER_IDENT']), git(repo, ['var', 'GIT_AUTHOR_IDENT'])]);
  if (out.code === 0 && author.code === 0) return {};
  return {
    GIT_AUTHOR_NAME: 'runplan',
    GIT_AUTHOR_EMAIL: 'runplan@localhost',
    GIT_COMMITTER_NAME: 'runplan',
    GIT_COMMITTER_EMAIL: 'runplan@localhost',
  };
}

/** What every hook-running git command of an attempt shares. */
export interface GitRunContext {
  ownerTag: string;
  signal: AbortSignal;
  env: Record<string, string>;
}

// A git command that may run repository hooks: through settle, with the git deadline and
// the attempt's ownerTag, so a hook that hangs is torn down like any other child.
export function gitSettled(cwd: string, args: readonly string[], ctx: GitRunContext): Promise<Captured> {
  return capture({
    argv: ['git', ...args],
    cwd,
    env: scrubbedGitEnv(ctx.env),
    input: '',
    deadlineMs: GIT_DEADLINE_MS,
    signal: ctx.signal,
    ownerTag: ctx.ownerTag,
    maxBuffer: 1 << 20,
  });
}

// Whether a settled git command succeeded.
export function succeeded(c: Captured): boolean {
  return c.reason === 'exited' && c.exitCode === 0;
}

// One line describing a failed settled git command (stderr tail, or why it did not exit).
export function describeGitFailure(args: readonly string[], c: Captured): string {
  const tail = c.stderr.toString('utf8').trim().split('\n').slice(-3).join(' | ');
  const how = c.reason === 'exited' ? `exit ${c.exitCode}` : c.reason;
  return `git ${args.join(' ')}: ${how}${tail !== '' ? `: ${tail}` : ''}`;
}

// The paths of every worktree git has registered for the repository (`worktree list -z`).
export async function registeredWorktrees(repo: string): Promise<Set<string>> {
  const listed = await git(repo, ['worktree', 'list', '--porcelain', '-z']);
  const trees = new Set<string>();
  if (listed.code !== 0) return trees;
  for (const field of listed.stdout.split('\0')) if (field.startsWith('worktree ')) trees.add(field.slice('worktree '.length));
  return trees;
}
