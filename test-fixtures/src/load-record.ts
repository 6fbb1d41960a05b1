// How a bin loaded its CLI, for the start-up tests of the bins that run a one-file CommonJS
// bundle with a V8 code cache (settle, runplan).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BinResult, runBin, tempDir } from './helpers.js';

export interface LoadSeen {
  /** Files the CommonJS loader read. */
  cjs: string[];
  /** Whether the ESM loader ran. */
  esm: boolean;
  /** Every vm.Script made: its file, whether it was handed cached data, whether V8 rejected it. */
  scripts: { filename: string; cached: boolean; rejected: boolean | undefined }[];
}

/** Runs `bin` (a Node script) under a preload that records what was loaded and how. */
export async function runRecordingLoad(bin: string, args: string[], nodeFlags: string[] = []): Promise<{ r: BinResult; seen: LoadSeen }> {
  const dir = tempDir();
  try {
    const seen = join(dir.path, 'seen.json');
    const preload = join(dir.path, 'seen.cjs');
    writeFileSync(
      preload,
      `const vm = require('node:vm'); const scripts = [];
       const Script = vm.Script;
       vm.Script = class extends Script { constructor(code, options) { super(code, options);
         scripts.push({ filename: options?.filename, cached: options?.cachedData !== undefined, rejected: this.cachedDataRejected }); } };
       process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify({
         cjs: Object.keys(require.cache), esm: process.moduleLoadList.includes('NativeModule internal/modules/esm/load'), scripts })));`,
    );
    const r = await runBin(process.execPath, [...nodeFlags, '--require', preload, bin, ...args]);
    return { r, seen: JSON.parse(readFileSync(seen, 'utf8')) as LoadSeen };
  } finally {
    dir.cleanup();
  }
}

/** `body` (CommonJS module text) in the form a one-file CLI ships in: wrapped in its module function (scripts/stamp.js). */
export function wrappedModule(body: string): string {
  return `(function (exports, require, module, __filename, __dirname) {${body}\n})\n`;
}

/**
 * The text of another build of a bundle that V8's own check (the source's length) cannot tell
 * from `text`: its build id (the first line, `// build:<16 hex>`) changed, and `from` replaced
 * by `to`, of the same length.
 */
export function otherBuildOf(text: string, from: string, to: string): string {
  const id = /^\/\/ build:([0-9a-f]{16})\n/.exec(text)?.[1];
  if (id === undefined) throw new Error('the bundle does not start with its build id');
  if (from.length !== to.length || !text.includes(from)) throw new Error(`cannot replace ${from} by ${to} in the bundle`);
  const otherId = `${id.slice(0, 15)}${id.endsWith('0') ? '1' : '0'}`;
  return text.replace(`// build:${id}`, `// build:${otherId}`).replace(from, to);
}
