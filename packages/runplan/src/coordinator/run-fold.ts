import { HEADER_TYPE, readHeader, type JournalRecord } from '@runplan/journal';
import { RunView } from '../events/view.js';

/**
 * The run's journal folded in memory as this coordinator writes it: the live table follows
 * it (StartInfo.view) and the report at the receipt is drawn from it (RunEnd.view), so
 * neither reads the journal back — for 10k tasks a read of the journal was a third of a
 * resume, and the resume read it three times. A resume goes on from the fold its decision
 * read (RecoveredRun holds copies of what it takes from it); a new run starts from its
 * header, read back since the writer wrote it. Each record is folded as a reader of the file
 * would see it (its data through JSON), before any observer sees it. The fold is handed to
 * the report only if it saw every record of the file, seq after seq, up to the writer's last
 * one; otherwise (a repaired tail, a journal that changed under the scan) the report reads
 * the journal as before.
 */
export class RunFold {
  /** The seq the next record must have; undefined once one was missed. */
  #next: number | undefined;

  private constructor(
    readonly view: RunView,
    next: number | undefined,
  ) {
    this.#next = next;
  }

  // A resume: the fold of the journal as its decision scanned it (`lastSeq`: its last record).
  static resuming(view: RunView, lastSeq: number | undefined): RunFold {
    return new RunFold(view, lastSeq === undefined ? undefined : lastSeq + 1);
  }

  // A new journal: its header, read back (one line).
  static async created(journal: string): Promise<RunFold> {
    const fold = new RunFold(new RunView(), undefined);
    try {
      const read = await readHeader(journal);
      if (read === undefined) return fold;
      fold.view.add({ seq: 0, prev: '00000000', ts: read.ts, type: HEADER_TYPE, data: { ...read.header } });
      fold.#next = 1;
    } catch {
      // The report reads the journal itself.
    }
    return fold;
  }

  // One durable record of this coordinator's. One that does not follow the last is still
  // folded (the table goes on), but the report no longer takes the fold.
  add(record: JournalRecord): void {
    this.#next = this.#next === record.seq ? this.#next + 1 : undefined;
    try {
      this.view.add({ ...record, data: JSON.parse(JSON.stringify(record.data)) as Record<string, unknown> });
    } catch {
      this.#next = undefined;
    }
  }

  // The whole journal's fold, when it saw every record up to the writer's `lastSeq`.
  whole(lastSeq: number): RunView | undefined {
    return this.#next !== undefined && this.#next === lastSeq + 1 ? this.view : undefined;
  }
}
