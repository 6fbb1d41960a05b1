import { existsSync } from 'node:fs';
import { repeatedValueOption, typedValues, type DeclaredOption } from '@runplan/common';
import { resolve } from 'node:path';
import { notADirectory } from './host/dir-check.js';
import { commonDir, toplevel } from './host/git.js';
import { stateRootFor } from './host/state.js';
import type { PlanProblem } from './plan/types.js';
import type { RunRequest } from './coordinator/types.js';

// What runplan's CLI files share.

/** Thrown for a bad flag value: a usage error, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

// Every problem of an invalid plan, one line each at its key path (none for a file that
// cannot be read or parsed), then the summary line.
export function printProblems(file: string, problems: PlanProblem[], say: (line: string) => void): void {
  for (const p of problems) say(`runplan: ${p.reason}: ${file}: ${p.path !== '' ? `${p.path}: ` : ''}${p.message}`);
  say(`runplan: invalid_plan: ${file}: ${problems.length} problem(s); nothing was run`);
}

/** What `run`'s options ask of the run: everything of a RunRequest but the plan and the hooks. */
export type RunOptions = Omit<RunRequest, 'planFile' | 'signal' | 'onRecord' | 'onLiveUsage' | 'onNotice' | 'onStart'>;

// `run`'s options as a request, each value checked (a UsageError, exit 2, for a bad one):
// `run` and `run --dry-run` both read them here, so the preview cannot accept what `run` refuses.
export function runOptions(o: Record<string, unknown>): RunOptions {
  let jobs: number | undefined;
  if (o.jobs !== undefined) {
    jobs = Number(o.jobs);
    // Digits only: Number() also took 0x10, 1e3, 5.0, ' 5' and 99999999999999999999 (1e20).
    if (!/^[0-9]+$/.test(String(o.jobs)) || !Number.isSafeInteger(jobs) || jobs < 1)
      throw new UsageError(`--jobs ${String(o.jobs)}: not a positive integer`);
  }
  return {
    ...(typeof o.repo === 'string' ? { repo: resolve(o.repo) } : {}),
    ...(typeof o.stateDir === 'string' ? { stateDir: resolve(o.stateDir) } : {}),
    ...(jobs !== undefined ? { jobs } : {}),
    fresh: o.fresh === true,
    ...(o.run !== undefined ? { run: String(o.run) } : {}),
    ...(o.retry !== undefined ? { retry: ([] as unknown[]).concat(o.retry).map(String) } : {}),
    breakLock: o.breakLock === true,
    allowBackground: o.allowBackground === true,
    ...(o.keepGoing === true ? { keepGoing: true } : {}),
    ...(o.newRun === true ? { newRun: true } : {}),
    ...(o.resetBudget === true ? { resetBudget: true } : {}),
  };
}

// The state root for status/stop: --state-dir, else <git common dir of --repo or cwd>/runplan.
export async function stateRoot(o: Record<string, unknown>): Promise<{ ok: true; value: string } | { ok: false; message: string }> {
  if (typeof o.stateDir === 'string') return { ok: true, value: stateRootFor('', o.stateDir) };
  const dir = typeof o.repo === 'string' ? resolve(o.repo) : process.cwd();
  const missing = await notADirectory(dir);
  if (missing !== undefined) return { ok: false, message: `${missing} (pass --repo or --state-dir)` };
  const top = await toplevel(dir);
  const common = top !== undefined ? await commonDir(top) : undefined;
  return common !== undefined
    ? { ok: true, value: stateRootFor(common) }
    : { ok: false, message: `${dir} is not inside a git work tree (pass --repo or --state-dir)` };
}

// What `status` and `log` say on stderr when the state root holds no run at all (stdout stays
// empty, JSON Lines with --json): a mistyped --state-dir must not look like an empty slug list.
export function noRunsLine(root: string): string {
  return `runplan: no runs under ${root}${existsSync(root) ? '' : ' (it does not exist)'}`;
}

/** Options whose values are strings as typed (camelCase key → flag name; @runplan/common's asTyped). */
export const STRING_OPTIONS = {
  repo: 'repo',
  stateDir: 'state-dir',
  run: 'run',
  out: 'out',
  retry: 'retry',
  jobs: 'jobs',
  wait: 'wait',
  grace: 'grace',
  project: 'project',
  bashTimeout: 'bash-timeout',
} as const;

/** Options meant to be given more than once, each value counting: `run --retry TASK`. */
export const REPEATABLE_OPTIONS: ReadonlySet<string> = new Set(['--retry']);

// A value option given more than once (`--jobs 2 --jobs 3`) is a usage error naming it, as in
// settle, run-hook and journal: cac hands over an array, and which value won was anybody's
// guess (`--repo A --repo B` fell back to the current directory). Words after `--` are operands.
export function refuseRepeated(options: readonly DeclaredOption[], argv: readonly string[]): void {
  const repeated = repeatedValueOption(options, argv, REPEATABLE_OPTIONS);
  if (repeated !== undefined) throw new UsageError(`${repeated.flag} given ${repeated.times} times; give it once`);
}

/** Options whose value is a path: an empty one is refused, never resolved to the current directory. */
const PATH_OPTIONS = ['repo', 'state-dir', 'out', 'project'] as const;

// `--state-dir ""` (an unset variable: `--state-dir "$STATE"`) resolved to the current directory:
// `run` wrote the slug's state into the work tree and, seeing none of its runs, started a new
// one from the base. Refused as usage (exit 2) before anything is read or written.
export function refuseEmptyPaths(argv: readonly string[]): void {
  for (const name of PATH_OPTIONS) {
    if (typedValues(argv, name).includes('')) throw new UsageError(`--${name} "": an empty path; give a directory or file`);
  }
}
