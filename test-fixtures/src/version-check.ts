import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binPath, runBin } from './helpers.js';

type Tool = Parameters<typeof binPath>[0];

// The version in a package's package.json, found from a compiled test file's URL
// (packages/<pkg>/dist/test/x.test.js → packages/<pkg>/package.json).
export function packageVersionOf(testFileUrl: string): string {
  const packageDir = dirname(dirname(dirname(fileURLToPath(testFileUrl))));
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
}

// Runs a tool's real bin once per argument list; each must have asked for the version:
// exactly `TOOL VERSION\n` on stdout, nothing on stderr, exit 0. Throws naming the first that did not.
export async function expectVersionFrom(tool: Tool, version: string, argLists: readonly (readonly string[])[]): Promise<void> {
  for (const args of argLists) {
    const r = await runBin(binPath(tool), [...args]);
    const shown = `${tool} ${args.join(' ')}`;
    if (r.exitCode !== 0 || r.stdout !== `${tool} ${version}\n` || r.stderr !== '')
      throw new Error(`${shown}: exit ${r.exitCode}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}`);
  }
}
