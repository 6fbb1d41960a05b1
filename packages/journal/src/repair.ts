import { err, ok, unreachable, type Result } from '@runplan/common';
import { ioError, type JournalError } from './errors.js';
import { REPAIRED_TYPE } from './format.js';
import { nodeJournalFs, type JournalFs } from './fs.js';
import { acquireLock } from './lock.js';
import { scanJournal } from './scan.js';
import { describeStatus } from './status.js';
import { truncateTornTail, type TailRepair } from './torn-tail.js';
import { pathProblem } from './input-check.js';
import { identityPathFor, resumeWriter } from './writer.js';

export type { TailRepair } from './torn-tail.js';

export interface RepairOptions {
  waitMs?: number;
  breakLock?: boolean;
  fs?: JournalFs;
  identityPath?: string;
}

/**
 * Repairs a torn tail under the writer lock: keeps FILE.broken, truncates to the last
 * whole record, syncs, and records a `journal-repaired` event (unless the journal already
 * ends with its terminal record). Refuses corruption and then changes nothing.
 */
export async function repairJournal(
  path: string,
  options: RepairOptions = {},
): Promise<Result<TailRepair | { clean: true }, JournalError>> {
  const bad = pathProblem(path);
  if (bad) return err(bad);
  const journalFs = options.fs ?? nodeJournalFs;
  const lock = await acquireLock(path, {
    identityPath: options.identityPath ?? identityPathFor(path),
    ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}),
    ...(options.breakLock ? { breakLock: true } : {}),
    details: { journal: path, purpose: 'repair' },
  });
  if (!lock.ok) return lock;
  let handedOver = false;
  try {
    const scan = await scanJournal(path);
    switch (scan.status.kind) {
      case 'clean':
        return ok({ clean: true });
      case 'corrupt':
        return err({ reason: 'corrupt', path, status: scan.status, message: describeStatus(path, scan.status) });
      case 'torn_tail': {
        if (scan.size === 0)
          return err({ reason: 'missing', path, message: `${path} is empty: it has no header, so there is nothing to repair` });
        const repair = await truncateTornTail(path, scan.validEnd, scan.size, journalFs);
        if (scan.count > 0 && !scan.terminal) {
          const writer = await resumeWriter(path, lock.value, scan, journalFs, undefined);
          handedOver = true;
          try {
            await writer.append(REPAIRED_TYPE, { ...repair });
          } finally {
            await writer.close();
          }
        }
        return ok(repair);
      }
      default:
        return unreachable(scan.status);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return err({ reason: 'missing', path, message: `${path} does not exist` });
    if ((e as { error?: JournalError }).error) return err((e as { error: JournalError }).error);
    return err(ioError(path, 'repairing', e));
  } finally {
    if (!handedOver) await lock.value.release();
  }
}
