import { isPlainObject } from '@runplan/common';
import { keyPath, type PlanReader } from './reader.js';
import type { Plan } from './types.js';

// Where a plan may name {{budget.remaining_usd}} / {{budget.remaining_tokens}}: in task
// commands, gates and until (tier pre_run), and only when [budget] has the limit they read.
// The template language allows them in every pre_run template; runplan's own pre_run hook
// runs before the attempt's spend is known to the agent and is refused here.

const MENTION = /\{\{\s*budget\.remaining_(usd|tokens)\s*\}\}/g;

/** The [budget] key each variable reads what is left of. */
const LIMIT_OF = { usd: 'max_cost_usd', tokens: 'max_tokens' } as const;

// The budget variables one argv element names ('usd' / 'tokens').
function mentions(element: unknown): Array<'usd' | 'tokens'> {
  if (typeof element !== 'string') return [];
  return [...element.matchAll(MENTION)].map((m) => m[1] as 'usd' | 'tokens');
}

// The argv arrays of one task table (or [defaults]) that may name a budget variable, at their key paths.
function taskArgvs(table: unknown, path: string): Array<{ path: string; argv: unknown[] }> {
  if (!isPlainObject(table)) return [];
  const out: Array<{ path: string; argv: unknown[] }> = [];
  for (const key of ['command', 'until']) {
    const v = table[key];
    if (Array.isArray(v)) out.push({ path: keyPath(path, key), argv: v });
  }
  const gates = table['gates'];
  if (Array.isArray(gates))
    gates.forEach((g, i) => {
      if (Array.isArray(g)) out.push({ path: keyPath(keyPath(path, 'gates'), i), argv: g });
    });
  return out;
}

// Refuses budget variables in the pre_run hook, and wherever [budget] lacks the limit they read.
export function checkBudgetVars(r: PlanReader, raw: Record<string, unknown>, budget: Plan['budget']): void {
  const hooks = raw['hooks'];
  const preRun = isPlainObject(hooks) ? hooks['pre_run'] : undefined;
  if (Array.isArray(preRun))
    preRun.forEach((element, i) => {
      for (const which of mentions(element))
        r.problem(
          keyPath('hooks.pre_run', i),
          'not_allowed_in_tier',
          `{{budget.remaining_${which}}} is allowed only in task commands, gates and until, not in hooks`,
        );
    });
  const tasks = Array.isArray(raw['tasks']) ? raw['tasks'] : [];
  const argvs = [...taskArgvs(raw['defaults'], 'defaults'), ...tasks.flatMap((t, i) => taskArgvs(t, keyPath('tasks', i)))];
  for (const { path, argv } of argvs) {
    argv.forEach((element, j) => {
      for (const which of new Set(mentions(element))) {
        const limit = which === 'usd' ? budget.maxCostUsd : budget.maxTokens;
        if (limit !== undefined) continue;
        r.problem(
          keyPath(path, j),
          'missing_value',
          `names {{budget.remaining_${which}}} but the plan sets no [budget] ${LIMIT_OF[which]} (nothing is left of a limit that does not exist)`,
        );
      }
    });
  }
}
