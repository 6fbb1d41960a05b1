import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { LockHolder } from '@runplan/journal';
import { isStopHolder, liveCoordinator } from '../observe/status.js';
import { commonDir, toplevel } from '../host/git.js';
import { listSlugs, slugPaths, stateRootFor } from '../host/state.js';

/** A slug whose coordinator is live: the lock answers and the identity's pid + start time match a process. */
export interface LiveRun {
  stateRoot: string;
  slug: string;
  holder: LockHolder;
}

/** Where the gate looks for state: the directory the tool runs in and what the command names. */
export interface StateQuery {
  cwd: string;
  /** `--repo` values of the command's runplan invocations (relative to cwd). */
  repos: string[];
  /** `--state-dir` values of the command's runplan invocations (relative to cwd). */
  stateDirs: string[];
}

// The state roots a tool call could touch: the repository's `.git/runplan`, any named one.
export async function stateRoots(q: StateQuery): Promise<string[]> {
  const roots = new Set<string>();
  for (const dir of [q.cwd, ...q.repos.map((r) => resolve(q.cwd, r))]) {
    const top = await toplevel(dir);
    // Inside the git dir itself (`cd .git`) there is no work tree, but git still names it.
    const common = await commonDir(top ?? dir);
    if (common !== undefined) roots.add(stateRootFor(common));
  }
  for (const dir of q.stateDirs) roots.add(stateRootFor('', resolve(q.cwd, dir)));
  return [...roots];
}

// Every slug under the roots whose coordinator is live (a `runplan stop` holding a crashed run's slug is not one).
export async function liveRuns(roots: string[]): Promise<LiveRun[]> {
  const live: LiveRun[] = [];
  for (const stateRoot of roots) {
    for (const slug of await listSlugs(stateRoot)) {
      const holder = await liveCoordinator(slugPaths(stateRoot, slug));
      if (holder !== undefined && !isStopHolder(holder)) live.push({ stateRoot, slug, holder });
    }
  }
  return live;
}

/**
 * Whose globs a path is read by: bash's `**` (globstar), like its `*`, never enters a hidden
 * directory; the Glob tool's `**` is taken to enter any (its dot handling has varied by
 * release), so it may only deny more.
 */
export type GlobReader = 'bash' | 'glob_tool';

// A path as the shell reads a leading `~` or `~/` (HOME); anything else as it is.
export function expandHome(word: string): string {
  const home = process.env.HOME;
  return home !== undefined && (word === '~' || word.startsWith('~/')) ? home + word.slice(1) : word;
}

// Whether a word the command names (a path, `--flag=path`, a glob) lies in or is a state
// root, read from any of the directories the command runs in (`cd .git && ls runplan`).
export function touchesRoot(word: string, cwds: string[], roots: string[], reader: GlobReader): boolean {
  const candidates = [word, ...(word.includes('=') ? [word.slice(word.indexOf('=') + 1)] : [])];
  for (const raw of candidates) {
    if (raw === '') continue;
    const expanded = expandHome(raw);
    for (const cwd of cwds) {
      const path = resolve(cwd, expanded);
      for (const root of roots)
        for (const r of spellings(root))
          if (path === r || path.startsWith(r + '/') || (/[*?[]/.test(path) && globReaches(path.split('/'), 0, r.split('/'), 0, reader)))
            return true;
    }
  }
  return false;
}

// Whether glob components from parts[i] could name the root's components from rootParts[j]
// on, or a path inside them (`.git/run*`, `.git/*/single`, `**/runplan`).
function globReaches(parts: string[], i: number, rootParts: string[], j: number, reader: GlobReader): boolean {
  if (j === rootParts.length) return true;
  const part = parts[i];
  if (part === undefined) return false;
  const component = rootParts[j]!;
  if (part === '**') {
    if (reader === 'glob_tool') return true;
    // Zero directories, or one more that is not hidden.
    return (
      globReaches(parts, i + 1, rootParts, j, reader) || (!component.startsWith('.') && globReaches(parts, i, rootParts, j + 1, reader))
    );
  }
  // `*` and `?` do not match a leading dot (bash without dotglob).
  if (component.startsWith('.') && !part.startsWith('.') && part !== component) return false;
  return globPart(part).test(component) && globReaches(parts, i + 1, rootParts, j + 1, reader);
}

// One path component of a glob as a regular expression: `*`, `?` and `[…]` as the shell reads them.
function globPart(part: string): RegExp {
  let source = '';
  for (let i = 0; i < part.length; i++) {
    const c = part[i]!;
    const close = c === '[' ? part.indexOf(']', i + 2) : -1;
    if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (close > 0) {
      const body = part.slice(i + 1, close);
      source += `[${body.startsWith('!') ? `^${body.slice(1)}` : body.replace(/\\/g, '\\\\')}]`;
      i = close;
    } else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  try {
    return new RegExp(`^${source}$`);
  } catch {
    return /^/; // a class the shell would read some other way: assume it could match
  }
}

// A root as given and as its real path (a symlinked checkout names it either way).
export function spellings(root: string): string[] {
  try {
    const real = realpathSync(root);
    return real === root ? [root] : [root, real];
  } catch {
    return [root];
  }
}
