import { delimiter, isAbsolute, join } from 'node:path';
import { isExecutable } from '../executor/tools.js';
import type { TaskSpec } from '../plan/types.js';

/**
 * The programs a task's attempt would not find, for `run --dry-run`: the first word of its
 * command, of each gate and of `until`, and of the plan's `pre_run` / `post_run` hooks
 * (`hooks`), looked up as the spawn will look it up — a name on the PATH the attempt gets
 * (its `env_file`, then its `env`, then runplan's own; gates, `until` and hooks get
 * runplan's), a path with a directory as it is. Not looked up: a word that
 * still holds a template (`{{…}}`: it is rendered per attempt), a relative path (it is
 * relative to the worktree, which does not exist yet), and anything that runs on Slurm (the
 * node's PATH is not ours to read).
 */
export function missingPrograms(
  task: TaskSpec,
  env: NodeJS.ProcessEnv = process.env,
  hooks: ReadonlyArray<readonly string[] | undefined> = [],
): string[] {
  const missing: string[] = [];
  const own = env.PATH ?? '';
  if (task.executor === undefined) {
    const path = task.envFileValues?.PATH ?? task.env.PATH ?? own;
    const name = task.command[0];
    if (name !== undefined && !found(name, path)) missing.push(name);
  }
  if ((task.gatesExecutor ?? task.executor) === undefined) {
    for (const argv of [...task.gates, ...(task.until !== undefined ? [task.until] : [])]) {
      const name = argv[0];
      if (name !== undefined && !missing.includes(name) && !found(name, own)) missing.push(name);
    }
  }
  // Hooks run here, with runplan's environment, whatever the task's executor.
  for (const argv of hooks) {
    const name = argv?.[0];
    if (name !== undefined && !missing.includes(name) && !found(name, own)) missing.push(name);
  }
  return missing;
}

// Whether `name` names an executable file, or is not ours to judge (see missingPrograms).
function found(name: string, path: string): boolean {
  if (name === '' || name.includes('{{')) return true;
  if (name.includes('/')) return isAbsolute(name) ? isExecutable(name) : true;
  return path.split(delimiter).some((dir) => dir !== '' && isAbsolute(dir) && isExecutable(join(dir, name)));
}
