import { typedValues } from '@runplan/common';
import type { TemplateVars } from './render.js';
import { isUntrusted, knownVariables, variableSpec } from './variables.js';

// Reading workdir's arguments: --var values as typed, counts, and the usage errors they raise (exit 2).

/** A usage problem found while reading arguments (exit 2). */
export class UsageError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * `--var NAME=VALUE`, read from the raw argv: the option parser turns numeric-looking values
 * into numbers (`0042` → 42), and a value must reach the template exactly as typed.
 * Dates default to now (UTC).
 */
export function readVars(argv: string[], now: Date): TemplateVars {
  const vars: Record<string, string> = {};
  for (const item of typedValues(argv, 'var')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError('usage', `--var ${JSON.stringify(item)} is not NAME=VALUE`);
    const name = item.slice(0, eq);
    if (!variableSpec(name) && !isUntrusted(name)) {
      throw new UsageError('unknown_variable', `--var ${name}: not a template variable (known: ${knownVariables().join(', ')})`);
    }
    if (Object.hasOwn(vars, name)) throw new UsageError('usage', `--var ${name} given twice`);
    vars[name] = item.slice(eq + 1);
  }
  const iso = now.toISOString();
  const date = iso.slice(0, 10);
  const time = iso.slice(11, 19).replaceAll(':', '');
  vars['run.date'] ??= date;
  vars['run.time'] ??= time;
  vars['run.started_at'] ??= `${date.replaceAll('-', '')}T${time}Z`;
  return vars;
}

// --retain N and --keep-runs N: a non-negative integer as typed.
export function count(text: string, flag: string): number {
  if (!/^[0-9]+$/.test(text)) throw new UsageError('bad_retain', `${flag} ${JSON.stringify(text)} is not a non-negative integer`);
  return Number(text);
}
