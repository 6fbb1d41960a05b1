/**
 * Ownership is carried in the environment as a variable whose NAME holds the tag
 * (`RUNPLAN_OWNER_<tag>=1`): a settle nested under another adds its own variable and
 * cannot overwrite the outer one, so an outer teardown still finds the innermost command.
 */
export const tagPrefix = 'RUNPLAN_OWNER_';

const tagShape = /^[A-Za-z0-9_]{1,64}$/;

let issued = 0;

/** The longest prefix newOwnerTag takes: the rest of a tag is at most 5+1+13+1+6+1+6 = 33 characters (pid, clock, counter below 36^6, random). */
const maxPrefixLength = 31;

// A fresh tag (per settle call, or per attempt when a caller makes one to journal): unique
// on this host because it holds our pid, a monotonic clock and a counter, plus random bits.
// (Not node:crypto: loading it costs more start-up time than the whole rest of settle.)
// `prefix` (tag characters, at most 31) starts the tag, so every tag a caller made with it
// can be found by the prefix alone (`findTagged({prefixes: [prefix]})`), e.g. one per run.
export function newOwnerTag(prefix = ''): string {
  if (prefix !== '' && !(isOwnerTag(prefix) && prefix.length <= maxPrefixLength)) {
    throw new TypeError(`newOwnerTag: not a tag prefix (A-Z a-z 0-9 _, at most ${maxPrefixLength}): ${JSON.stringify(prefix)}`);
  }
  issued += 1;
  const random = Math.floor(Math.random() * 36 ** 6).toString(36);
  return `${prefix}${process.pid.toString(36)}_${process.hrtime.bigint().toString(36)}_${issued.toString(36)}_${random}`;
}

export function isOwnerTag(tag: string): boolean {
  return tagShape.test(tag);
}

export function tagVariable(tag: string): string {
  return `${tagPrefix}${tag}`;
}

// Whether a NUL-separated /proc/<pid>/environ carries the tag variable.
export function environHasTag(environ: Buffer, tag: string): boolean {
  const needle = `${tagVariable(tag)}=`;
  if (environ.subarray(0, needle.length).toString('latin1') === needle) return true;
  return environ.includes(`\0${needle}`, 0, 'latin1');
}

// Whether a NUL-separated /proc/<pid>/environ carries a tag variable whose tag starts with
// `prefix`: a variable NAME starting `RUNPLAN_OWNER_<prefix>`, at the start of an entry (a
// value holding that text does not count: entries are split by NUL, which no value holds).
export function environHasTagPrefix(environ: Buffer, prefix: string): boolean {
  const needle = tagVariable(prefix);
  if (environ.subarray(0, needle.length).toString('latin1') === needle) return true;
  return environ.includes(`\0${needle}`, 0, 'latin1');
}

// The child's environment: base, then overrides (undefined deletes), then our tags.
export function childEnv(
  base: NodeJS.ProcessEnv,
  overrides: Record<string, string | undefined> | undefined,
  tags: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  // Keys, then each value: enumerating process.env's entries costs twice as much.
  for (const key of Object.keys(base)) {
    const value = base[key];
    if (value !== undefined) env[key] = value;
  }
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  for (const tag of tags) env[tagVariable(tag)] = '1';
  return env;
}
