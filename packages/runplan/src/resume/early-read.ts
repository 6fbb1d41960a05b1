import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runDirNames, type SlugPaths } from '../host/state.js';
import { inspectRuns, type PriorRun } from './inspect.js';

/**
 * A slug's runs read before its lock was taken (`runplan run` reads them while the plan
 * loads on a worker: plan/prepare.ts). Used only if, once the lock is held, every journal
 * is still the file it was before it was read — same run dirs, and each journal's device,
 * inode, size, mtime and ctime — else the runs are read again under the lock. A journal is
 * append-only: any write to it changes its size and ctime. (The resumed journal's bytes are
 * checked once more by its writer, which re-hashes them against the scan's sha256.)
 */
export interface EarlyRuns {
  slug: SlugPaths;
  /** Undefined when the read failed or the run dirs changed while it ran. */
  read: Promise<{ seen: Map<string, string>; runs: PriorRun[] } | undefined>;
}

// Each run's journal as stat sees it, by run id: what a later look compares.
async function journalsSeen(slug: SlugPaths): Promise<Map<string, string>> {
  const names = await runDirNames(slug);
  const seen = await Promise.all(
    names.map(async (id): Promise<[string, string]> => {
      try {
        const s = await stat(join(slug.dir, id, 'journal.jsonl'), { bigint: true });
        return [id, `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`];
      } catch (e) {
        return [id, `gone:${(e as NodeJS.ErrnoException).code ?? ''}`];
      }
    }),
  );
  return new Map(seen);
}

// Starts reading the slug's runs (inspectRuns) without its lock: read-only, like `runplan status`.
export function readRunsEarly(slug: SlugPaths): EarlyRuns {
  const read = (async () => {
    const seen = await journalsSeen(slug);
    const runs = await inspectRuns(slug);
    if (runs.length !== seen.size || runs.some((r) => !seen.has(r.paths.runId))) return undefined;
    return { seen, runs };
  })().catch(() => undefined);
  return { slug, read };
}

// The runs read early, if the slug is the one now locked and no journal changed since: else undefined.
export async function stillAsRead(early: EarlyRuns | undefined, slug: SlugPaths): Promise<PriorRun[] | undefined> {
  if (early === undefined || early.slug.dir !== slug.dir) return undefined;
  const read = await early.read;
  if (read === undefined) return undefined;
  const now = await journalsSeen(slug);
  if (now.size !== read.seen.size) return undefined;
  for (const [id, seen] of now) if (read.seen.get(id) !== seen) return undefined;
  return read.runs;
}
