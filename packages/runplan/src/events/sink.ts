import type { ProcessIdentity } from '@runplan/settle';
import type { JournalRecord, JournalWriter } from '@runplan/journal';
import { maskDeep, maskSecrets } from '../plan/secrets.js';
import { JournalFailure, type Emit } from '../coordinator/context.js';
import { failPoint, hits, type FailPoint } from './failpoint.js';
import { ReceiptGuard } from './receipt.js';
import type { EventMap, EventType, RefFailedData, RunCompleteData, RunFailedData } from './types.js';
import { diskFaultOf, diskReason, type DiskFault } from '../host/disk.js';
import { releaseReserve, writeJournalFailureNote } from '../host/disk-reserve.js';

/** What the run's journal writer is built from. */
export interface RunJournalInit {
  writer: JournalWriter;
  secrets: readonly string[];
  /** Aborted when a write fails (the journal or the disk): every attempt is torn down. */
  abort: AbortController;
  /** The run dir: where the disk reserve and the journal-failed note live. */
  runDir: string;
  journalPath: string;
  /** Every record once it is durable (RunRequest.onRecord). */
  onRecord: ((record: JournalRecord) => void) | undefined;
}

/** The one writer of the run's journal: events, the one receipt, and what a failed write means. */
export class RunJournal {
  /** The first append the journal refused: the run stops with exit 5 and no receipt. */
  failure: Error | undefined;
  /** The first write the file system refused (the run stops with disk_full / io_error). */
  diskFault: DiskFault | undefined;
  /** Whether the disk reserve was given back after the disk failure. */
  roomMade = false;
  /** Every ref-failed journaled, for the receipt's `refsFailed`. */
  readonly refFailures: RefFailedData[] = [];
  readonly #fail: FailPoint | undefined = failPoint();
  readonly #receipt: ReceiptGuard;

  constructor(readonly init: RunJournalInit) {
    this.#receipt = new ReceiptGuard(async (type, data) => {
      await this.makeRoom();
      let record: JournalRecord;
      try {
        if (hits(this.#fail, 'journal-error', type, data)) throw new Error(`fail point journal-error:${type}`);
        record = await this.init.writer.appendTerminal(type, maskDeep(data, this.init.secrets) as unknown as Record<string, unknown>);
      } catch (e) {
        this.failure ??= e instanceof Error ? e : new Error(String(e));
        throw e;
      }
      this.observe(record);
      this.killAfter(type, data);
    });
  }

  // Appends one event (secrets masked), durable before it resolves. A failed append
  // poisons the run: every attempt is torn down and the run ends with exit 5.
  readonly emit: Emit = async <T extends EventType>(type: T, data: EventMap[T]): Promise<void> => {
    if (this.failure) throw new JournalFailure(this.failure.message);
    await this.makeRoom();
    let record: JournalRecord;
    try {
      if (hits(this.#fail, 'journal-error', type, data)) throw new Error(`fail point journal-error:${type}`);
      record = await this.init.writer.append(type, maskDeep(data, this.init.secrets) as unknown as Record<string, unknown>);
    } catch (e) {
      this.failure = e instanceof Error ? e : new Error(String(e));
      this.init.abort.abort('journal_failed');
      throw new JournalFailure(this.failure.message);
    }
    if (type === 'ref-failed') this.refFailures.push(data as RefFailedData);
    this.observe(record);
    this.killAfter(type, data);
  };

  // The run's one terminal receipt (see ReceiptGuard); rejects when the journal refuses it.
  complete(data: RunCompleteData): Promise<void> {
    return this.#receipt.complete(data);
  }

  failed(data: RunFailedData): Promise<void> {
    return this.#receipt.failed(data);
  }

  // The `kill-after` fail point: SIGKILLs the coordinator once that record is durable.
  killAfter(type: string, data: unknown): void {
    if (hits(this.#fail, 'kill-after', type, data)) process.kill(process.pid, 'SIGKILL');
  }

  // A write the file system refused: remember the first, stop the run (every attempt is
  // torn down through the abort signal, as for a journal failure).
  readonly diskFailed = (fault: DiskFault): void => {
    this.diskFault ??= fault;
    if (!this.init.abort.signal.aborted) this.init.abort.abort('disk_full');
  };

  // After a disk failure, gives the run's reserve back before the next journal write, so
  // the records that close the attempts and the receipt fit on the file system that filled.
  async makeRoom(): Promise<void> {
    if (this.diskFault === undefined || this.roomMade) return;
    this.roomMade = true;
    await releaseReserve(this.init.runDir);
  }

  // After exit 5: a note in the run dir saying the journal refused a write (and what it
  // said), so the coordinator that resumes journals journal-failed, not a crash. Best effort.
  async noteFailure(coordinator: ProcessIdentity): Promise<void> {
    await releaseReserve(this.init.runDir);
    const e = this.failure;
    const fault = diskFaultOf(e);
    const code = (e as { error?: { code?: unknown } } | undefined)?.error?.code;
    await writeJournalFailureNote(this.init.runDir, {
      coordinator,
      failedAt: new Date().toISOString(),
      reason: fault !== undefined ? diskReason(fault.errno) : null,
      errno: fault?.errno ?? (typeof code === 'string' ? code : null),
      path: fault?.path || this.init.journalPath,
      message: maskSecrets(e?.message ?? 'the journal refused a write', this.init.secrets),
    });
  }

  observe(record: JournalRecord): void {
    try {
      this.init.onRecord?.(record);
    } catch {
      // Observers never change outcomes.
    }
  }
}
