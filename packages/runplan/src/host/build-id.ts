import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let id: string | null | undefined;

/**
 * Which build of runplan this is: the sha256 that scripts/bundle.js wrote into
 * `dist/lib/build-id.js` over every other file of the bundle, read from beside this module.
 * Undefined where there is none (the unbundled `dist/src`, whose code is spread over packages
 * and node_modules): a cache keyed by it is then neither read nor written.
 */
export function buildId(): string | undefined {
  if (id === undefined) {
    try {
      const text = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'build-id.js'), 'utf8');
      id = /^export const buildId = '([0-9a-f]{64})';$/m.exec(text)?.[1] ?? null;
    } catch {
      id = null;
    }
  }
  return id ?? undefined;
}
