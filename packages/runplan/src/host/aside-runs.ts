import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RUN_ID_PATTERN, type SlugPaths } from './state.js';

// What the attempt-number floor reads of runs whose journals cannot be read (resume/choose.ts).

/** A run directory `--fresh` set aside for its corrupt journal (resume/close.ts). */
const ASIDE_PATTERN = new RegExp(`^${RUN_ID_PATTERN.source.slice(1, -1)}\\.corrupt-\\d{8}T\\d{6}Z$`);

/**
 * The directories of the slug's runs whose journals were corrupt and set aside by `--fresh`
 * (`<run id>.corrupt-<UTC>`): their journals are not read again, their evidence is kept.
 */
export async function asideRunDirs(slug: SlugPaths): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(slug.dir);
  } catch {
    return [];
  }
  return names.filter((name) => ASIDE_PATTERN.test(name)).map((name) => join(slug.dir, name));
}

/**
 * Each task's highest attempt number among a run directory's evidence dirs (`<task>.<n>`,
 * one per attempt started): what a run whose journal cannot be read started.
 */
export async function evidenceAttempts(runDir: string): Promise<Map<string, number>> {
  const highest = new Map<string, number>();
  let names: string[];
  try {
    names = await readdir(join(runDir, 'evidence'));
  } catch {
    return highest;
  }
  for (const name of names) {
    const m = /^(.+)\.([1-9]\d*)$/.exec(name);
    if (m === null) continue;
    const n = Number(m[2]);
    if (n > (highest.get(m[1]!) ?? 0)) highest.set(m[1]!, n);
  }
  return highest;
}
