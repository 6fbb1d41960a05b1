import type { Executor } from './contract.js';
import { localExecutor } from './local.js';
import { slurmExecutor } from './slurm/executor.js';
import type { ExecutorSpec } from './spec.js';

export type { CommandEnd, CommandSpec, Executor, ExecutorHooks, GateSpec, OwnedTeardown, OwnedWork } from './contract.js';
export { commandExecutor, gatesExecutor, planUsesSlurm, type ExecutorSpec } from './spec.js';

// The executor a spec names.
export function executorFor(spec: ExecutorSpec): Executor {
  return spec.kind === 'slurm' ? slurmExecutor(spec) : localExecutor;
}
