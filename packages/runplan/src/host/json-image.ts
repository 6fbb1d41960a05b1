/**
 * A value written as JSON and read back as the same value: what the fold snapshot and the
 * plan cache store. JSON.parse gives back plain objects, arrays, strings, finite numbers,
 * booleans and null; an `undefined` (a key set to it, an array slot) is lost or becomes
 * null, so its place is noted ("holes") and set again after the parse.
 */

/** Where a value sits inside another: keys and array indexes from the root. */
export type JsonPath = Array<string | number>;

// The places of every `undefined` inside `value`, or undefined when `value` holds anything
// JSON would not give back as it is (a Map, a class instance, a Date, NaN, -0…).
export function jsonHoles(value: unknown): JsonPath[] | undefined {
  const holes: JsonPath[] = [];
  return survivesJson(value, [], 0, holes) ? holes : undefined;
}

// Whether `value` comes back from JSON as it is: plain objects and arrays of strings, finite
// numbers, booleans and null; each `undefined` met is noted in `holes` (JSON drops or nulls
// it) to be put back. False for anything else (a Map, a class, NaN…).
// `path[0..depth)` is where `value` sits.
function survivesJson(value: unknown, path: JsonPath, depth: number, holes: JsonPath[]): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'undefined':
      holes.push(path.slice(0, depth));
      return true;
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      path[depth] = i;
      if (!survivesJson(value[i], path, depth + 1, holes)) return false;
    }
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    path[depth] = key;
    if (!survivesJson(record[key], path, depth + 1, holes)) return false;
  }
  return true;
}

// Sets the `undefined` at `path` again.
export function putBack(root: unknown, path: JsonPath): void {
  let at = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path[path.length - 1]!] = undefined;
}
