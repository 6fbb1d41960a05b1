import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { err, ok, unreachable, type Result } from '@runplan/settle';
import { ioError, type JournalError } from './errors.js';
import { REPAIRED_TYPE } from './format.js';
import { fsyncDirectory, nodeJournalFs, type JournalFs } from './fs.js';
import { acquireLock } from './lock.js';
import { scanJournal } from './scan.js';
import { describeStatus } from './status.js';
import { pathProblem, identityPathFor, resumeWriter } from './writer.js';

/** What repairing a torn tail did. */
export interface TailRepair {
  /** The journal's new length: where the torn line started. */
  truncatedAt: number;
  /** A copy of the whole file as it was, torn line included. */
  brokenCopy: string;
  droppedBytes: number;
}

// Copies the journal aside as FILE.broken (or FILE.broken.N: an older copy is evidence
// too and is never overwritten), durably, appearing whole or not at all.
async function saveBrokenCopy(path: string, journalFs: JournalFs): Promise<string> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.broken.tmp`);
  await copyFile(path, temp, constants.COPYFILE_EXCL);
  try {
    const fd = await journalFs.open(temp, constants.O_RDONLY);
    try {
      await journalFs.fsync(fd);
    } finally {
      await journalFs.close(fd);
    }
    for (let n = 0; ; n++) {
      const target = n === 0 ? `${path}.broken` : `${path}.broken.${n}`;
      try {
        await link(temp, target);
        await fsyncDirectory(dir, journalFs);
        return target;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 1000) throw e;
      }
    }
  } finally {
    await unlink(temp).catch(() => {});
  }
}

// Keeps a .broken copy, then cuts the journal back to its last whole record and syncs.
// The caller holds the writer lock.
export async function truncateTornTail(path: string, validEnd: number, size: number, journalFs: JournalFs): Promise<TailRepair> {
  const brokenCopy = await saveBrokenCopy(path, journalFs);
  const fd = await journalFs.open(path, constants.O_WRONLY);
  try {
    await journalFs.ftruncate(fd, validEnd);
    await journalFs.fsync(fd);
  } finally {
    await journalFs.close(fd);
  }
  return { truncatedAt: validEnd, brokenCopy, droppedBytes: size - validEnd };
}

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
export async function repairJournal(path: string, options: RepairOptions = {}): Promise<Result<TailRepair | { clean: true }, JournalError>> {
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
        if (scan.size === 0) return err({ reason: 'missing', path, message: `${path} is empty: it has no header, so there is nothing to repair` });
        const repair = await truncateTornTail(path, scan.validEnd, scan.size, journalFs);
        if (scan.count > 0 && !scan.terminal) {
          const writer = await resumeWriter(path, lock.value, scan, journalFs);
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
