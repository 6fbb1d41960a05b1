import type { JournalWriter } from '@runplan/journal';
import { readSnapshotMeta, writeSnapshot } from '../events/fold-snapshot.js';
import type { RunView } from '../events/view.js';

/**
 * When the coordinator writes its fold snapshot (events/fold-snapshot.ts): once the journal
 * is RUNPLAN_FOLD_SNAPSHOT_BYTES long (default 1 MiB, ~300 trivial tasks; `0` turns them
 * off), then each time it has grown by half since the last one, so the snapshots of a run
 * cost about twice one snapshot of its whole fold, and a resume parses at most the last
 * third of the journal. A resumed run goes on from the size of the snapshot it found, or
 * of its journal when it found none.
 * Never after the receipt: a run with one is continued, and its journal is read in full.
 */
const GROWTH = 1.5;
const DEFAULT_MIN_BYTES = 1024 * 1024;

// RUNPLAN_FOLD_SNAPSHOT_BYTES as a byte count (undefined: off).
function minBytes(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.RUNPLAN_FOLD_SNAPSHOT_BYTES;
  if (raw === undefined || raw === '') return DEFAULT_MIN_BYTES;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) return DEFAULT_MIN_BYTES;
  return n === 0 ? undefined : n;
}

// Where a run whose records end at `ends` (each line's end offset, in order) writes its
// snapshots: the index of the record each one ends with, and its size.
export function snapshotSizes(ends: readonly number[], env: NodeJS.ProcessEnv = process.env): Array<{ index: number; size: number }> {
  let next = minBytes(env);
  const out: Array<{ index: number; size: number }> = [];
  ends.forEach((size, index) => {
    if (next === undefined || size < next) return;
    out.push({ index, size });
    next = Math.ceil(size * GROWTH);
  });
  return out;
}

export class FoldSnapshots {
  #next: number | undefined;

  constructor(
    private readonly journal: string,
    private readonly writer: JournalWriter,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const min = minBytes(env);
    // Half again the size of the last snapshot, or of the journal as it is opened when it has
    // none (a journal an older runplan wrote, or one whose snapshot did not hold): a resume
    // that ends soon after it starts writes none.
    const last = min !== undefined ? (readSnapshotMeta(journal)?.size ?? writer.position()?.size ?? 0) : 0;
    this.#next = min === undefined ? undefined : Math.max(min, Math.ceil(last * GROWTH));
  }

  // After the durable record `seq` was folded into `view` (undefined: the fold missed one):
  // writes the snapshot when one is due and the writer's last durable record is this one.
  after(view: RunView | undefined, seq: number): void {
    if (this.#next === undefined || view === undefined || view.terminal !== undefined) return;
    const at = this.writer.position();
    if (at === undefined || at.lastSeq !== seq || at.size < this.#next) return;
    this.#next = Math.ceil(at.size * GROWTH);
    writeSnapshot(this.journal, view, at);
  }
}
