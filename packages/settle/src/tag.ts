/**
 * Ownership is carried in the environment as a variable whose NAME holds the tag
 * (`RUNPLAN_OWNER_<tag>=1`): a settle nested under another adds its own variable and
 * cannot overwrite the outer one, so an outer teardown still finds the innermost command.
 */
export const tagPrefix = 'RUNPLAN_OWNER_';

const tagShape = /^[A-Za-z0-9_]{1,64}$/;

let issued = 0;

// A fresh tag (per settle call, or per attempt when a caller makes one to journal): unique
// on this host because it holds our pid, a monotonic clock and a counter, plus random bits.
// (Not node:crypto: loading it costs more start-up time than the whole rest of settle.)
export function newOwnerTag(): string {
  issued += 1;
  const random = Math.floor(Math.random() * 36 ** 6).toString(36);
  return `${process.pid.toString(36)}_${process.hrtime.bigint().toString(36)}_${issued.toString(36)}_${random}`;
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

// The child's environment: base, then overrides (undefined deletes), then our tags.
export function childEnv(
  base: NodeJS.ProcessEnv,
  overrides: Record<string, string | undefined> | undefined,
  tags: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) if (value !== undefined) env[key] = value;
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  for (const tag of tags) env[tagVariable(tag)] = '1';
  return env;
}
