import { scanJournal, type JournalStatus, type ScanOptions, type ScanResult } from '@runplan/journal';
import { readSnapshot } from '../events/fold-snapshot.js';
import { RunView } from '../events/view.js';
import { compareRunStarts, headerStartOrder, runDirNames, runPaths, type RunPaths, type RunStart, type SlugPaths } from '../host/state.js';

/**
 * Reading a slug's earlier runs back from their journals, read-only: which runs exist and
 * how they ended, each journal read once and folded into its RunView as it streams.
 */
export type PriorKind = 'complete' | 'failed' | 'incomplete' | 'corrupt';

export interface PriorRun {
  paths: RunPaths;
  /** Its place in the slug's history (runs are listed in this order, never by name). */
  start: RunStart;
  kind: PriorKind;
  /** What the journal's valid records say, folded as they were read (the records are not kept). */
  journal: RunView;
  status: JournalStatus;
  /** The scan itself (with the sha256 of a clean journal): a resume's writer takes it if the file is unchanged. */
  scan: ScanResult | undefined;
  /** The class of a `run-failed` receipt. */
  failedClass: string | null;
  /** The reason of a `run-failed` receipt (`never_started`: a never-started run chooseRun closed). */
  failedReason: string | null;
  /** Created but never started: see neverStarted. */
  neverStarted: boolean;
}

/** One journal read once. */
export interface RunRead {
  /** Its valid records folded (empty when the journal could not be read at all). */
  view: RunView;
  status: JournalStatus;
  /** Undefined when the journal could not be read at all (`error` says why). */
  scan: ScanResult | undefined;
  error: string | undefined;
  /** With `snapshot`: the bytes of the journal its fold snapshot covered (0: none was taken). */
  snapshotBytes: number;
}

export interface ReadRunOptions {
  /** Also hash it, for a resume's writer. */
  digest?: boolean;
  /**
   * Parse and fold only the records of these types (the view then holds only what follows
   * from them; every other line is checked as validateJournal checks it).
   */
  only?: ReadonlySet<string>;
  /**
   * Start from the journal's fold snapshot (events/fold-snapshot.ts) when it is one of
   * this code's whose journal bytes are unchanged: only the records after it are parsed
   * and folded; every line is checked all the same. Not with `only`.
   */
  snapshot?: boolean;
}

// Reads a journal in one streaming pass into its RunView (readJournal's checks, no record
// kept). An unreadable file is a corrupt status at offset 0 with an empty view.
export async function readRun(journal: string, opts: ReadRunOptions = {}): Promise<RunRead> {
  const snap = opts.snapshot === true && opts.only === undefined ? readSnapshot(journal) : undefined;
  if (snap !== undefined) {
    const read = await scanInto(snap.view, journal, { digest: opts.digest === true, from: snap.meta.size });
    const scan = read.scan;
    // The snapshot holds the fold of exactly the bytes the writer hashed: taken only if the journal still begins with them.
    if (scan?.prefixSha256 === snap.meta.sha256 && scan.validEnd >= snap.meta.size && scan.lastSeq >= snap.meta.lastSeq)
      return { ...read, snapshotBytes: snap.meta.size };
  }
  return scanInto(new RunView(), journal, {
    digest: opts.digest === true,
    ...(opts.only !== undefined ? { parseTypes: opts.only } : {}),
  });
}

// One scan of the journal folded into `view` (the records after `from` only, with it).
async function scanInto(view: RunView, journal: string, options: ScanOptions): Promise<RunRead> {
  try {
    const scan = await scanJournal(journal, { ...options, onRecord: (record, _json, offset) => view.add(record, offset) });
    return { view, status: scan.status, scan, error: undefined, snapshotBytes: 0 };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return {
      view: new RunView(),
      status: { kind: 'corrupt', offset: 0, seq: null, reason } as JournalStatus,
      scan: undefined,
      error: reason,
      snapshotBytes: 0,
    };
  }
}

// Every run of the slug in start order (oldest first), with how it ended. Each journal is
// read once, every record parsed and checked (readJournal's checks), and folded as it is read.
export async function inspectRuns(slug: SlugPaths): Promise<PriorRun[]> {
  const runs: PriorRun[] = [];
  for (const id of await runDirNames(slug)) {
    const paths = runPaths(slug, id);
    const { view, status, scan } = await readRun(paths.journal, { digest: true, snapshot: true });
    const terminal = view.terminal;
    const kind: PriorKind =
      status.kind === 'corrupt'
        ? 'corrupt'
        : terminal === undefined
          ? 'incomplete'
          : terminal.type === 'run-complete'
            ? 'complete'
            : 'failed';
    const failed = view.failedReceipt;
    runs.push({
      paths,
      start: {
        runId: id,
        startOrder: headerStartOrder(scan?.header),
        createdAt: scan?.header !== undefined ? (view.createdAt ?? null) : null,
      },
      kind,
      journal: view,
      status,
      scan,
      failedClass: typeof failed?.class === 'string' ? failed.class : null,
      failedReason: typeof failed?.reason === 'string' ? failed.reason : null,
      neverStarted: kind === 'incomplete' && neverStarted(scan, id),
    });
  }
  return runs.sort((a, b) => compareRunStarts(a.start, b.start));
}

/**
 * Whether a run was created but never started: its coordinator died between creating the
 * journal and making `run-started` durable, so nothing was dispatched (run-started is
 * journaled before anything else a run does). Only two shapes qualify: the header alone
 * (with the run's own id; a torn line after it is a crash mid-append of run-started), and
 * no whole record at all (zero bytes, or a torn first line — the journal writer links the
 * header into place whole, so this is a file system's doing, not runplan's). Corruption, a
 * header naming another run, or any record after the header is not this and stays a
 * refusal (recoverRun).
 */
function neverStarted(scan: ScanResult | undefined, runId: string): boolean {
  if (scan === undefined || scan.status.kind === 'corrupt' || scan.terminal) return false;
  if (scan.count === 0) return true;
  return scan.count === 1 && scan.header?.runId === runId;
}
