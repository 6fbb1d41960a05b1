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
    const common = top !== undefined ? await commonDir(top) : undefined;
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

// Whether a word the command names (a path, `--flag=path`, a glob) lies in or is a state
// root, read from any of the directories the command runs in (`cd .git && ls runplan`).
export function touchesRoot(word: string, cwds: string[], roots: string[]): boolean {
  const home = process.env.HOME;
  const candidates = [word, ...(word.includes('=') ? [word.slice(word.indexOf('=') + 1)] : [])];
  for (const raw of candidates) {
    if (raw === '') continue;
    const expanded = home !== undefined && (raw === '~' || raw.startsWith('~/')) ? home + raw.slice(1) : raw;
    for (const cwd of cwds) {
      const path = resolve(cwd, expanded);
      for (const root of roots)
        for (const r of spellings(root)) if (path === r || path.startsWith(r + '/') || globReaches(path, r)) return true;
    }
  }
  return false;
}

// Whether a glob (`.git/run*`, `.git/*/single`) could name the root or a path inside it.
function globReaches(pattern: string, root: string): boolean {
  if (!/[*?[]/.test(pattern)) return false;
  const parts = pattern.split('/');
  const rootParts = root.split('/');
  for (let i = 0; i < rootParts.length; i++) {
    const part = parts[i];
    if (part === undefined) return false;
    if (part === '**') return true;
    // `*` and `?` do not match a leading dot (bash without dotglob).
    if (rootParts[i]!.startsWith('.') && !part.startsWith('.') && part !== rootParts[i]) return false;
    if (!globPart(part).test(rootParts[i]!)) return false;
  }
  return true;
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
function spellings(root: string): string[] {
  try {
    const real = realpathSync(root);
    return real === root ? [root] : [root, real];
  } catch {
    return [root];
  }
}
