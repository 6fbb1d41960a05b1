import type { TemplateVars } from '@runplan/workdir';
import type { HookTier } from './outcome.js';

/** Which template variable each hook environment variable is set from, per tier. */
export const HOOK_ENV_VARS: readonly { env: string; variable: string; tiers: readonly HookTier[] }[] = [
  { env: 'HARNESS_NAME', variable: 'harness.name', tiers: ['pre_run', 'post_run'] },
  { env: 'HARNESS_WORKDIR', variable: 'harness.workdir', tiers: ['pre_run', 'post_run'] },
  { env: 'HARNESS_RUN_DATADIR', variable: 'run.datadir', tiers: ['pre_run', 'post_run'] },
  { env: 'HARNESS_RUN_ID', variable: 'run.id', tiers: ['pre_run', 'post_run'] },
  { env: 'HARNESS_RUN_ATTEMPT', variable: 'run.attempt', tiers: ['pre_run', 'post_run'] },
  { env: 'HARNESS_TASK_ID', variable: 'task.id', tiers: ['pre_run', 'post_run'] },
  { env: 'HARNESS_PLAN_SLUG', variable: 'plan.slug', tiers: ['pre_run', 'post_run'] },
  { env: 'HARNESS_RUN_OUTCOME', variable: 'run.outcome', tiers: ['post_run'] },
  { env: 'HARNESS_RUN_EXIT_CODE', variable: 'run.exit_code', tiers: ['post_run'] },
];

// The hook variables a tier sets, each paired with the template variable it comes from.
export function hookEnvVariables(tier: HookTier): { env: string; variable: string }[] {
  return HOOK_ENV_VARS.filter((entry) => entry.tiers.includes(tier));
}

/**
 * The environment a hook runs with: the coordinator's own (never a task's env/env_file),
 * minus every inherited `HARNESS_*` — a stale `HARNESS_RUN_OUTCOME` from an outer run must
 * never read as this run's verdict — plus the hook variables of the tier, each set only
 * when its template variable is given. Values are not checked here; `runHook` refuses
 * vars the template language would refuse before anything is spawned.
 */
export function hookEnv(baseEnv: NodeJS.ProcessEnv, vars: TemplateVars, tier: HookTier): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(baseEnv)) {
    if (value === undefined || name.startsWith('HARNESS_')) continue;
    env[name] = value;
  }
  for (const { env: name, variable } of hookEnvVariables(tier)) {
    const value = lookup(vars, variable);
    if (value !== undefined) env[name] = String(value);
  }
  return env;
}

// A variable's value, whether or not the map holds it as an own property.
function lookup(vars: TemplateVars, variable: string): string | number | undefined {
  if (!Object.hasOwn(vars, variable)) return undefined;
  const value = (vars as Record<string, unknown>)[variable];
  return typeof value === 'string' || typeof value === 'number' ? value : undefined;
}
