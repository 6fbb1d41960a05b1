/**
 * The template variables, their value classes and the tiers that may name them
 * (DESIGN.md "Templates"). One table, so plan validation, rendering and pruning's
 * name-shape regex cannot disagree about what a variable may hold.
 */
export type Tier = 'workdir' | 'pre_run' | 'post_run';

export const TIERS: readonly Tier[] = ['workdir', 'pre_run', 'post_run'];

/** What a value must look like; checked before anything is rendered. */
export type ValueClass = 'identifier' | 'integer' | 'decimal' | 'date' | 'path' | 'enum';

export interface VariableSpec {
  name: string;
  valueClass: ValueClass;
  tiers: readonly Tier[];
  /** Run-varying: differs between runs of one plan, so only the last path element may hold it. */
  varying: boolean;
  /** Regex source (unanchored) a valid value matches; pruning builds name shapes from it. */
  pattern: string;
  /** For `enum`: the only values allowed. */
  values?: readonly string[];
}

/** `[A-Za-z0-9][A-Za-z0-9._-]*`: never empty, never `.` or `..`, never a `/`. */
export const IDENTIFIER_PATTERN = '[A-Za-z0-9][A-Za-z0-9._-]*';
const identifierRegex = new RegExp(`^${IDENTIFIER_PATTERN}$`);

// Whether a value may stand as a path element or argument without climbing or splitting.
export function isIdentifier(value: string): boolean {
  return identifierRegex.test(value);
}

const ALL: readonly Tier[] = TIERS;
const HOOKS: readonly Tier[] = ['pre_run', 'post_run'];
const POST: readonly Tier[] = ['post_run'];
/** Task commands and gates only (a coordinator refuses them in its own pre_run hook). */
const PRE: readonly Tier[] = ['pre_run'];

const DATE = '[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])';
const TIME = '(?:[01][0-9]|2[0-3])[0-5][0-9][0-5][0-9]';
const STAMP = '[0-9]{4}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3])[0-5][0-9][0-5][0-9]Z';

export const RUN_OUTCOMES = ['success', 'failed', 'timed_out', 'interrupted'] as const;

const table: VariableSpec[] = [
  { name: 'harness.name', valueClass: 'identifier', tiers: ALL, varying: false, pattern: IDENTIFIER_PATTERN },
  { name: 'plan.slug', valueClass: 'identifier', tiers: ALL, varying: false, pattern: IDENTIFIER_PATTERN },
  { name: 'run.id', valueClass: 'identifier', tiers: ALL, varying: true, pattern: IDENTIFIER_PATTERN },
  { name: 'task.id', valueClass: 'identifier', tiers: ALL, varying: true, pattern: IDENTIFIER_PATTERN },
  { name: 'run.attempt', valueClass: 'integer', tiers: ALL, varying: true, pattern: '[0-9]+' },
  { name: 'run.date', valueClass: 'date', tiers: ALL, varying: true, pattern: DATE },
  { name: 'run.time', valueClass: 'date', tiers: ALL, varying: true, pattern: TIME },
  { name: 'run.started_at', valueClass: 'date', tiers: ALL, varying: true, pattern: STAMP },
  { name: 'model', valueClass: 'identifier', tiers: HOOKS, varying: true, pattern: IDENTIFIER_PATTERN },
  { name: 'harness.workdir', valueClass: 'path', tiers: HOOKS, varying: true, pattern: '[^\\0]+' },
  { name: 'package.dir', valueClass: 'path', tiers: HOOKS, varying: true, pattern: '[^\\0]+' },
  { name: 'run.datadir', valueClass: 'path', tiers: HOOKS, varying: true, pattern: '[^\\0]+' },
  { name: 'event.file', valueClass: 'path', tiers: HOOKS, varying: true, pattern: '[^\\0]+' },
  {
    name: 'run.outcome',
    valueClass: 'enum',
    tiers: POST,
    varying: true,
    pattern: RUN_OUTCOMES.join('|'),
    values: RUN_OUTCOMES,
  },
  { name: 'run.exit_code', valueClass: 'integer', tiers: POST, varying: true, pattern: '-?[0-9]+' },
  // What is left of a plan's [budget] when an attempt starts: for an agent's own spending cap.
  { name: 'budget.remaining_usd', valueClass: 'decimal', tiers: PRE, varying: true, pattern: '[0-9]+\\.[0-9]{2}' },
  { name: 'budget.remaining_tokens', valueClass: 'integer', tiers: PRE, varying: true, pattern: '[0-9]+' },
];

const byName = new Map(table.map((spec) => [spec.name, spec]));

// The spec of a known variable, or undefined.
export function variableSpec(name: string): VariableSpec | undefined {
  return byName.get(name);
}

// Every known variable name, in table order (for messages and `--help`).
export function knownVariables(): string[] {
  return table.map((spec) => spec.name);
}

/**
 * `event.*` other than `event.file` is text an outside party wrote: it may never become an
 * argument or a path, in any tier. Hooks get `{{event.file}}` and read the payload themselves.
 */
export function isUntrusted(name: string): boolean {
  return name.startsWith('event.') && name !== 'event.file';
}

// Why a tier refuses a variable, in words an operator can act on.
export function tierRefusal(spec: VariableSpec, tier: Tier): string {
  if (tier === 'workdir' && spec.valueClass === 'path') {
    return `{{${spec.name}}} is not allowed in a workdir template (a workdir may not name itself or another path)`;
  }
  if (tier === 'workdir' && spec.name === 'model') {
    return `{{model}} is not allowed in a workdir template (only identifiers and dates of the run)`;
  }
  return `{{${spec.name}}} is not allowed in tier ${tier} (allowed in: ${spec.tiers.join(', ')})`;
}

/**
 * Checks one value against its variable's class; returns the rendered text or a reason.
 * Shape failures are all `bad_identifier`: the value could not stand where the template puts it.
 */
export function checkValue(spec: VariableSpec, value: string | number): { ok: true; text: string } | { ok: false; message: string } {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    return { ok: false, message: `${spec.name} = ${String(value)} is not an integer` };
  }
  const text = String(value);
  const shown = JSON.stringify(text);
  switch (spec.valueClass) {
    case 'identifier':
      return isIdentifier(text)
        ? { ok: true, text }
        : {
            ok: false,
            message: `${spec.name} = ${shown} is not an identifier ([A-Za-z0-9][A-Za-z0-9._-]*; never empty, . or .., no /)`,
          };
    case 'integer':
    case 'decimal':
    case 'date':
      return new RegExp(`^(?:${spec.pattern})$`).test(text)
        ? { ok: true, text }
        : { ok: false, message: `${spec.name} = ${shown} is not ${describeClass(spec)}` };
    case 'enum':
      return spec.values?.includes(text)
        ? { ok: true, text }
        : { ok: false, message: `${spec.name} = ${shown} is not one of ${spec.values?.join(', ') ?? ''}` };
    case 'path':
      return text !== '' && !text.includes('\0')
        ? { ok: true, text }
        : { ok: false, message: `${spec.name} = ${shown} is not a path (empty or holds a NUL byte)` };
  }
}

function describeClass(spec: VariableSpec): string {
  switch (spec.name) {
    case 'run.date':
      return 'a UTC date YYYY-MM-DD';
    case 'run.time':
      return 'a UTC time HHMMSS';
    case 'run.started_at':
      return 'a UTC timestamp like 20261129T075500Z';
    case 'run.attempt':
    case 'budget.remaining_tokens':
      return 'a non-negative integer';
    case 'budget.remaining_usd':
      return 'a dollar amount with two decimals (12.34)';
    default:
      return 'an integer';
  }
}
