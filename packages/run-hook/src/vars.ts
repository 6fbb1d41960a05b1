import { err, isPlainObject, ok, type Result } from '@runplan/common';

/** Why a `--var` or `--vars` input was refused; the message names the input and the key. */
export interface VarsError {
  reason: 'bad_assignment' | 'bad_vars_file';
  message: string;
}

type FlatVars = Record<string, string | number>;

// Parses one `--var NAME=VALUE` (the value may itself hold `=`).
export function parseAssignment(text: string): Result<[string, string], VarsError> {
  const at = text.indexOf('=');
  const name = at < 0 ? '' : text.slice(0, at);
  if (at < 0 || !/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(name)) {
    return err({ reason: 'bad_assignment', message: `--var ${JSON.stringify(text)} is not NAME=VALUE with a dotted NAME` });
  }
  return ok([name, text.slice(at + 1)]);
}

/**
 * The variables a `--vars` JSON document holds: a flat object of dotted names, where a
 * nested object is flattened to dotted names (`{"run": {"id": "x"}}` is `run.id`). Values
 * are strings or numbers; anything else is refused naming its key.
 */
export function flattenVars(document: unknown, source: string): Result<FlatVars, VarsError> {
  if (!isPlainObject(document)) {
    return err({ reason: 'bad_vars_file', message: `${source} is not a JSON object of variables` });
  }
  const flat: FlatVars = {};
  // Depth first in document order, with a stack of its own: recursion threw a RangeError
  // (a stack trace, exit 1) on a document nested some thousands deep.
  const stack: Array<{ entries: Iterator<[string, unknown]>; prefix: string }> = [
    { entries: Object.entries(document)[Symbol.iterator](), prefix: '' },
  ];
  let failure: VarsError | undefined;
  while (stack.length > 0 && failure === undefined) {
    const top = stack[stack.length - 1]!;
    const next = top.entries.next();
    if (next.done === true) {
      stack.pop();
      continue;
    }
    const [key, value] = next.value;
    const name = top.prefix + key;
    if (isPlainObject(value)) {
      stack.push({ entries: Object.entries(value)[Symbol.iterator](), prefix: `${name}.` });
    } else if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) {
      if (Object.hasOwn(flat, name)) failure = { reason: 'bad_vars_file', message: `${source}: ${name} is given twice` };
      else flat[name] = value;
    } else {
      failure = { reason: 'bad_vars_file', message: `${source}: ${name} is ${describe(value)}, not a string or number` };
    }
  }
  return failure ? err(failure) : ok(flat);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
