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
  const visit = (object: Record<string, unknown>, prefix: string): VarsError | undefined => {
    for (const [key, value] of Object.entries(object)) {
      const name = prefix + key;
      if (isPlainObject(value)) {
        const failure = visit(value, `${name}.`);
        if (failure) return failure;
      } else if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) {
        if (Object.hasOwn(flat, name)) {
          return { reason: 'bad_vars_file', message: `${source}: ${name} is given twice` };
        }
        flat[name] = value;
      } else {
        return { reason: 'bad_vars_file', message: `${source}: ${name} is ${describe(value)}, not a string or number` };
      }
    }
    return undefined;
  };
  const failure = visit(document, '');
  return failure ? err(failure) : ok(flat);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
