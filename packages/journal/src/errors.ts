import type { JournalStatus } from './status.js';

/** Who holds a lock, as its identity file says: enough to name it and to tell if it is dead. */
export interface LockHolder {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: with the pid, names one process across pid reuse. */
  startTime: number;
  bootId: string;
  host: string;
  /** ISO time the lock was taken. */
  acquiredAt: string;
  [k: string]: unknown;
}

/**
 * Every way a journal operation can refuse or fail. `reason` is the slug printed by the
 * CLI (`journal: <reason>: <message>`) and mapped to its exit code.
 */
export type JournalError =
  | { reason: 'lock_held'; path: string; holder?: LockHolder; message: string }
  | { reason: 'corrupt'; path: string; status: JournalStatus; message: string }
  | { reason: 'io_error'; path: string; message: string; code?: string }
  | {
      reason: 'missing' | 'exists' | 'terminal' | 'foreign_host' | 'bad_path' | 'record_too_large' | 'bad_record' | 'bad_run_id' | 'closed';
      path: string;
      message: string;
    };

export type JournalErrorReason = JournalError['reason'];

/** What `append` rejects with: an Error carrying the JournalError as data. */
export class JournalFailure extends Error {
  readonly error: JournalError;
  constructor(error: JournalError, options?: { cause?: unknown }) {
    super(error.message, options);
    this.name = 'JournalFailure';
    this.error = error;
  }
  get reason(): JournalErrorReason {
    return this.error.reason;
  }
}

// An fs error as a journal io_error naming what we were doing.
export function ioError(path: string, doing: string, cause: unknown): JournalError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const text = cause instanceof Error ? cause.message : String(cause);
  return { reason: 'io_error', path, message: `${doing} ${path} failed: ${text}`, ...(code ? { code } : {}) };
}
