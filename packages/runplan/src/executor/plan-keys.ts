import { keyPath, type PlanReader } from '../plan/reader.js';
import { EXECUTOR_KINDS, LOCAL, type ExecutorSpec } from './spec.js';

/** Keys of `[executor]` and of a task's `executor = {…}`. */
export const EXECUTOR_KEYS = ['kind', 'partition', 'account', 'extra_args'];

/**
 * srun options runplan sets itself for every job (the ownership name, the backstop time
 * limit, the worktree, stdio): an `extra_args` naming one would break ownership, the
 * deadline fences or the agent's streams, so validation refuses it.
 */
export const RESERVED_SRUN_OPTIONS = [
  '-J',
  '--job-name',
  '--comment',
  '-t',
  '--time',
  '-D',
  '--chdir',
  '-i',
  '--input',
  '-o',
  '--output',
  '-e',
  '--error',
  '--jobid',
  '--pty',
  '--export',
  '-p',
  '--partition',
  '-A',
  '--account',
];

/**
 * srun options that would change what a job's end means to runplan: `--no-kill` keeps a job
 * running on its other nodes when one fails, so a node failure would no longer end the
 * attempt as `slurm_node_failed` (retried once) but leave it running short a node.
 */
export const REFUSED_SRUN_OPTIONS = ['-k', '--no-kill'];

// `[executor]` or a task's `executor = {…}` at `path`; undefined when absent (or invalid).
export function readExecutor(r: PlanReader, value: unknown, path: string): ExecutorSpec | undefined {
  if (value === undefined) return undefined;
  const table = r.table(value, path);
  if (!table) return undefined;
  r.keys(table, EXECUTOR_KEYS, path);
  const at = (key: string): string => keyPath(path, key);
  if (table['kind'] === undefined) {
    r.problem(at('kind'), 'missing_key', `an executor needs a kind (${EXECUTOR_KINDS.join(' or ')})`);
    return undefined;
  }
  const kind = r.oneOf(table['kind'], at('kind'), EXECUTOR_KINDS);
  if (kind === undefined) return undefined;
  if (kind === 'local') {
    for (const key of ['partition', 'account', 'extra_args']) {
      if (table[key] !== undefined) r.problem(at(key), 'executor_key_unused', `${key} means something only with kind = "slurm"`);
    }
    return LOCAL;
  }
  const partition = slurmName(r, table['partition'], at('partition'));
  const account = slurmName(r, table['account'], at('account'));
  const extraArgs = table['extra_args'] === undefined ? [] : r.stringList(table['extra_args'], at('extra_args'));
  extraArgs?.forEach((arg, i) => {
    const option = arg.split('=')[0] ?? '';
    if (RESERVED_SRUN_OPTIONS.includes(option)) {
      const own =
        option === '-p' || option === '--partition'
          ? ' (use partition)'
          : option === '-A' || option === '--account'
            ? ' (use account)'
            : '';
      r.problem(keyPath(at('extra_args'), i), 'executor_option_reserved', `runplan sets ${option} itself for every job${own}`);
    } else if (REFUSED_SRUN_OPTIONS.includes(option)) {
      r.problem(
        keyPath(at('extra_args'), i),
        'executor_option_refused',
        `${option} would keep a job running after one of its nodes failed; runplan ends such an attempt as slurm_node_failed and retries it once`,
      );
    } else if (!arg.startsWith('-')) {
      r.problem(
        keyPath(at('extra_args'), i),
        'executor_option_invalid',
        `${JSON.stringify(arg)} is not an srun option (extra_args are options, each one element: "--mem=4G")`,
      );
    }
  });
  if (extraArgs === undefined) return undefined;
  return {
    kind: 'slurm',
    ...(partition !== undefined ? { partition } : {}),
    ...(account !== undefined ? { account } : {}),
    extraArgs,
  };
}

// A partition or account name: one word Slurm can take as one argument.
function slurmName(r: PlanReader, value: unknown, path: string): string | undefined {
  if (value === undefined) return undefined;
  const name = r.string(value, path);
  if (name === undefined) return undefined;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
    r.problem(path, 'bad_identifier', `${JSON.stringify(name)} is not a Slurm name ([A-Za-z0-9][A-Za-z0-9._-]*)`);
    return undefined;
  }
  return name;
}

// `gates_executor`: "local", or "slurm" (the task's or the plan's slurm executor).
export function readGatesExecutor(r: PlanReader, value: unknown, path: string, slurm: ExecutorSpec | undefined): ExecutorSpec | undefined {
  if (value === undefined) return undefined;
  const kind = r.oneOf(value, path, EXECUTOR_KINDS);
  if (kind === undefined) return undefined;
  if (kind === 'local') return LOCAL;
  if (slurm?.kind !== 'slurm') {
    r.problem(path, 'executor_missing', 'gates_executor = "slurm" needs a slurm executor ([executor] or the task\'s executor)');
    return undefined;
  }
  return slurm;
}
