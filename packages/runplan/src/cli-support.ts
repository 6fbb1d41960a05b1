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
