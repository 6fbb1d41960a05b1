import { resolve } from 'node:path';
import { commonDir, toplevel } from './host/git.js';
import { stateRootFor } from './host/state.js';
import type { PlanProblem } from './plan/types.js';

// What runplan's CLI files share.

/** Thrown for a bad flag value: a usage error, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

// Every problem of an invalid plan, one line each at its key path, then the summary line.
export function printProblems(file: string, problems: PlanProblem[], say: (line: string) => void): void {
  for (const p of problems) say(`runplan: ${p.reason}: ${file}: ${p.path}: ${p.message}`);
  say(`runplan: invalid_plan: ${file}: ${problems.length} problem(s); nothing was run`);
}

// `--out -` as `--out=-`: the option parser reads a lone `-` as no value at all.
export function joinDashValue(argv: string[], flag: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === flag && argv[i + 1] === '-') {
      out.push(`${flag}=-`);
      i++;
    } else out.push(argv[i]!);
  }
  return out;
}

// The state root for status/stop: --state-dir, else <git common dir of --repo or cwd>/runplan.
export async function stateRoot(o: Record<string, unknown>): Promise<{ ok: true; value: string } | { ok: false; message: string }> {
  if (typeof o.stateDir === 'string') return { ok: true, value: stateRootFor('', o.stateDir) };
  const dir = typeof o.repo === 'string' ? resolve(o.repo) : process.cwd();
  const top = await toplevel(dir);
  const common = top !== undefined ? await commonDir(top) : undefined;
  return common !== undefined
    ? { ok: true, value: stateRootFor(common) }
    : { ok: false, message: `${dir} is not inside a git work tree (pass --repo or --state-dir)` };
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
