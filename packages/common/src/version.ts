import { readFileSync } from 'node:fs';

// The `version` of the package a built CLI belongs to, read from its package.json
// (`moduleUrl` is the CLI's import.meta.url, at dist/src/cli.js), for `--version`.
export function packageVersion(moduleUrl: string): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', moduleUrl), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}
