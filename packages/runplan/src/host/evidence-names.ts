import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskSpec } from '../plan/types.js';

// The file a command's transcript is saved to: per round for an `until` loop. The crash
// recount (resume/recount.ts) finds the same names.
export function transcriptPath(evidenceDir: string, format: TaskSpec['format'], round?: number): string {
  return join(evidenceDir, `transcript${roundSuffix(round)}.${transcriptExtension(format)}`);
}

// What a loop round adds to its evidence files' names (nothing outside a loop).
export function roundSuffix(round: number | undefined): string {
  return round === undefined ? '' : `.round-${round}`;
}

function transcriptExtension(format: TaskSpec['format']): string {
  return format === 'text' ? 'txt' : 'jsonl';
}

/** A loop round's transcript in an attempt's evidence dir. */
export interface RoundTranscript {
  round: number;
  path: string;
}

// The loop rounds' transcripts an attempt's evidence dir holds, in round order (none when
// the attempt ran no loop, or the dir is gone).
export async function roundTranscripts(evidenceDir: string, format: TaskSpec['format']): Promise<RoundTranscript[]> {
  let names: string[];
  try {
    names = await readdir(evidenceDir);
  } catch {
    return [];
  }
  const shape = new RegExp(`^transcript\\.round-([1-9][0-9]*)\\.${transcriptExtension(format)}$`);
  const found: RoundTranscript[] = [];
  for (const name of names) {
    const round = shape.exec(name)?.[1];
    if (round !== undefined) found.push({ round: Number(round), path: join(evidenceDir, name) });
  }
  return found.sort((x, y) => x.round - y.round);
}
