import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isTable, type Table } from './reader.js';

/**
 * The files a plan names (`env_file`, `prompt_file`), read once each before validation,
 * so validating each of many tasks is plain synchronous work: `dir` is the plan's
 * directory, `read` maps each resolved path to its text or its error code.
 */
export interface PlanFiles {
  dir: string;
  read: Map<string, { text: string } | { code: string }>;
}

// Reads every env_file and prompt_file that `[defaults]` or a task names as a string.
export async function readPlanFiles(raw: Table, dir: string): Promise<PlanFiles> {
  const refs = new Set<string>();
  const collect = (table: unknown): void => {
    if (!isTable(table)) return;
    // prompt_file beside prompt is a conflict, never read.
    const keys = table['prompt'] === undefined ? ['env_file', 'prompt_file'] : ['env_file'];
    for (const key of keys) {
      const ref = table[key];
      if (typeof ref === 'string') refs.add(resolve(dir, ref));
    }
  };
  collect(raw['defaults']);
  if (Array.isArray(raw['tasks'])) for (const task of raw['tasks']) collect(task);
  const read = new Map<string, { text: string } | { code: string }>();
  await Promise.all(
    [...refs].map(async (file) => {
      try {
        read.set(file, { text: await readFile(file, 'utf8') });
      } catch (e) {
        read.set(file, { code: (e as NodeJS.ErrnoException).code ?? String(e) });
      }
    }),
  );
  return { dir, read };
}
