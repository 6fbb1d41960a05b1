import { HEADER_TYPE, readHeader, type JournalRecord } from '@runplan/journal';
import { RunView } from '../events/view.js';

/**
 * The run's journal folded in memory as this coordinator writes it, so the report written
 * at the receipt need not read the journal back (for 10k tasks that re-read was a third of
 * a resume). A resume starts from the fold its decision read; a new run from its header.
 * Records are folded as they were written to the file: each one's data goes through JSON
 * (what a reader would parse). Until `live()` (the take-over or run-started is done) they
 * are only queued: a resume's take-over still reads the maps of the fold it started from.
 * The fold is handed out only if it saw every record of the file, seq after seq, up to the
 * writer's last one; otherwise (a repaired tail, a journal that changed under the scan, an
 * observer that threw) the report reads the journal as before.
 */
export class ReportFold {
  /** The seq the next record must have; undefined once a record was missed. */
  #next: number | undefined;
  #queued: JournalRecord[] | undefined = [];
  readonly #view: RunView;

  private constructor(view: RunView, next: number | undefined) {
    this.#view = view;
    this.#next = next;
  }

  // A resume: the fold of the journal as its decision scanned it (`lastSeq`: the last record it holds).
  static resuming(view: RunView, lastSeq: number | undefined): ReportFold {
    return new ReportFold(view, lastSeq === undefined ? undefined : lastSeq + 1);
  }

  // A new journal: its header, read back (one line) since the writer wrote it.
  static async created(journal: string): Promise<ReportFold> {
    const fold = new ReportFold(new RunView(), undefined);
    try {
      const read = await readHeader(journal);
      if (read === undefined) return fold;
      fold.#view.add({ seq: 0, prev: '00000000', ts: read.ts, type: HEADER_TYPE, data: { ...read.header } });
      fold.#next = 1;
    } catch {
      // The report reads the journal itself.
    }
    return fold;
  }

  // One durable record of this coordinator's.
  add(record: JournalRecord): void {
    if (this.#next === undefined) return;
    if (record.seq !== this.#next) {
      this.#next = undefined;
      this.#queued = undefined;
      return;
    }
    try {
      const copy: JournalRecord = { ...record, data: JSON.parse(JSON.stringify(record.data)) as Record<string, unknown> };
      if (this.#queued !== undefined) this.#queued.push(copy);
      else this.#view.add(copy);
      this.#next += 1;
    } catch {
      this.#next = undefined;
      this.#queued = undefined;
    }
  }

  // From now on records are folded as they come (the queued ones first).
  live(): void {
    const queued = this.#queued;
    this.#queued = undefined;
    if (this.#next === undefined || queued === undefined) return;
    try {
      for (const r of queued) this.#view.add(r);
    } catch {
      this.#next = undefined;
    }
  }

  // The whole journal's fold, when it saw every record up to the writer's `lastSeq`.
  view(lastSeq: number): RunView | undefined {
    this.live();
    return this.#next !== undefined && this.#next === lastSeq + 1 ? this.#view : undefined;
  }
}
