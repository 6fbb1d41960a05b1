import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { OwnershipMode } from './cgroup.js';
import { sweepAfterSpawn } from './cgroup-sweep.js';
import { chooseOwnership, spawnOwned, type OwnershipChoice } from './ownership-choice.js';
import { codeOf, messageOf } from './preflight.js';
import { childEnv } from './tag.js';
import type { SettleEvent, SettleSpec, TransportError } from './types.js';

/** A started child and how it is owned, or why nothing started (the choice made so far is reported either way). */
export type Launch =
  | { ok: true; child: ChildProcess; owning: Exclude<OwnershipChoice, { kind: 'refused' }> }
  | { ok: false; error: TransportError; owning: OwnershipChoice };

/** What one spawn needs beyond the spec: its stdio, its tags (ours, then the caller's) and the ownership mode. */
export interface LaunchPlan {
  stdio: StdioOptions;
  tag: string;
  tags: readonly string[];
  mode: OwnershipMode;
}

// Spawns the child in a new session, in its own cgroup when it gets one, never through a shell.
export function launch(spec: SettleSpec, plan: LaunchPlan, emit: (event: SettleEvent) => void): Launch {
  const chosen = chooseOwnership(plan.mode, {
    tag: plan.tag,
    ...(spec.cgroupParent !== undefined ? { parent: spec.cgroupParent } : {}),
    ...(spec.ownerTag !== undefined ? { ownerTag: spec.ownerTag } : {}),
  });
  const [file, ...args] = spec.argv;
  let started: ReturnType<typeof spawnOwned<ChildProcess>>;
  try {
    const env = childEnv(spec.baseEnv ?? process.env, spec.env, plan.tags);
    started = spawnOwned(plan.mode, chosen, () =>
      spawn(file as string, args, { ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}), env, stdio: plan.stdio, detached: true }),
    );
  } catch (cause) {
    return { ok: false, error: spawnError(spec.argv, cause, spec.cwd), owning: { kind: 'group+tag' } };
  }
  if ('refused' in started) {
    const { reason, message } = started.refused;
    const error: TransportError = { code: reason, where: 'cgroup', message: `ownership "cgroup" needs a cgroup: ${message}` };
    return { ok: false, error, owning: { kind: 'group+tag' } };
  }
  const owning = started.choice;
  const cgroup = owning.kind === 'cgroup' ? owning.cgroup : undefined;
  if (cgroup !== undefined) sweepAfterSpawn(cgroup.path);
  emit({
    type: 'ownership',
    ownership: cgroup ? 'cgroup' : 'group+tag',
    ...(cgroup ? { cgroup: cgroup.path } : {}),
    ...(owning.kind === 'group+tag' && owning.fallback ? { fallback: owning.fallback } : {}),
  });
  return { ok: true, child: started.spawned, owning };
}

// A spawn that failed (ENOENT, EACCES, …) as a transport error naming the program. An empty
// program name is not found (ENOENT, 127, as GNU `timeout ''` says), whatever Node throws for it.
export function spawnError(argv: readonly string[], cause: unknown, cwd?: string): TransportError {
  if (argv[0] === '') return { code: 'ENOENT', where: 'spawn', message: 'cannot run "": ENOENT: an empty command name', cause };
  const code = codeOf(cause) ?? 'EINVAL';
  const why = pathWhy(argv[0] ?? '', code, cwd);
  return { code, where: 'spawn', message: `cannot run ${JSON.stringify(argv[0] ?? '')}: ${messageOf(cause)}${why}`, cause };
}

// What the errno leaves unsaid about a program named by a path: EACCES for a directory (not
// "chmod +x it"), ENOENT for a file that exists (its #! interpreter is what is missing).
function pathWhy(program: string, code: string, cwd: string | undefined): string {
  if (!program.includes('/') || (code !== 'EACCES' && code !== 'ENOENT')) return '';
  let stats: ReturnType<typeof statSync> | undefined;
  try {
    stats = statSync(resolve(cwd ?? '.', program));
  } catch {
    return '';
  }
  if (stats?.isDirectory()) return ' (it is a directory, not a program)';
  if (code === 'ENOENT' && stats?.isFile()) return ' (the file exists: the interpreter its #! line names was not found)';
  return '';
}
