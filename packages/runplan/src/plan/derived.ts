import type { Result } from '@runplan/common';
import { isIdentifier } from '@runplan/workdir';
import { planDigest, taskContractDigests } from './digest.js';
import { isTable } from './reader.js';
import { maskSecrets, planCopy, secretValues } from './secrets.js';
import type { Plan, PlanProblem } from './types.js';

/** What a run computes from its validated plan before its journal opens (each key-sorts every task). */
export interface PlanDerived {
  /** Every task's contract digest (taskContractDigests). */
  contracts: Map<string, string>;
  /** planDigest(plan). */
  digest: string;
  /** The plan copy's text as `plan.json` holds it: key-sorted, secrets masked, one trailing newline. */
  copyText: string;
}

// The plan's contract digests, its digest and its plan copy's text, in one place so the
// worker (plan/prepare-worker.ts) and the main thread compute the very same bytes.
export function derivePlan(plan: Plan, env: NodeJS.ProcessEnv = process.env): PlanDerived {
  const contracts = taskContractDigests(plan);
  const digest = planDigest(plan);
  const copyText = maskSecrets(JSON.stringify(planCopy(plan, env), null, 2), secretValues(plan, env)) + '\n';
  return { contracts, digest, copyText };
}

// The slug a parsed plan document names, when it is one a valid plan could have: only a
// hint (the plan is not validated yet) for reading the slug's state early; undefined else.
export function slugHint(raw: unknown): string | undefined {
  if (!isTable(raw)) return undefined;
  const slug = raw['slug'];
  return typeof slug === 'string' && isIdentifier(slug) ? slug : undefined;
}

/** A top-level `slug = "…"` (or '…') line of TOML, before the first table header. */
const TOML_SLUG = /^[ \t]*slug[ \t]*=[ \t]*(?:"([A-Za-z0-9][A-Za-z0-9._-]*)"|'([A-Za-z0-9][A-Za-z0-9._-]*)')[ \t]*(?:#.*)?$/m;

// The slug a plan file's text names on a line of its own before any table, read without
// parsing the file (the hint is only that: the validated plan's slug decides); undefined
// when it is not written that way (JSON, a quoted key, …): the parsed document is asked then.
export function slugInText(text: string): string | undefined {
  const table = /^[ \t]*\[/m.exec(text);
  const m = TOML_SLUG.exec(table === null ? text : text.slice(0, table.index));
  return m === null ? undefined : (m[1] ?? m[2]);
}

/** What the plan worker posts, in this order (`slug` only when the file parsed; `derived` only for a valid plan). */
export type PrepareMessage =
  | { kind: 'slug'; slug: string | undefined }
  | { kind: 'loaded'; loaded: Result<Plan, PlanProblem[]> }
  | { kind: 'derived'; derived: PlanDerived };
