import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { SLURM_TOOLS } from './slurm/cli.js';
import { planUsesSlurm, type ExecutorSpec } from './spec.js';

// The client tools a plan's executors need that are not on PATH (none for a local plan):
// `runplan validate` warns, `runplan run` refuses (exit 3, executor_unavailable) before
// any dispatch.
export function missingExecutorTools(
  plan: { tasks: readonly { executor?: ExecutorSpec; gatesExecutor?: ExecutorSpec }[] },
  path: string = process.env.PATH ?? '',
): string[] {
  if (!planUsesSlurm(plan)) return [];
  const dirs = path.split(delimiter).filter((d) => d !== '');
  return SLURM_TOOLS.filter((tool) => !dirs.some((dir) => isExecutable(join(dir, tool))));
}

// Whether `file` is a file we may execute (a directory is searchable, not runnable).
export function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
