import { dirname, join, sep } from 'node:path';
import { err, ok, type Result } from '@runplan/common';
import type { Captured, SettleReason } from '@runplan/settle';
import { maskSecrets } from '../plan/secrets.js';
import type { AttemptFailureData } from '../events/types.js';
import { failureOf } from '../events/failure.js';
import { diskFailure, diskFaultInText, diskFaultOf, type DiskFault } from '../host/disk.js';
import { commonDir } from '../host/git.js';
import type { Attempt } from './record.js';

/**
 * What a step returns: its value, or the failure that ends the attempt. Steps never throw a
 * failure; only a journal write (ctx.emit) throws, and runAttempt turns anything else thrown
 * (a bug) into `internal_error`.
 */
export type StepResult<T> = Result<T, AttemptFailureData>;

// A failure of the attempt: the class is the one the reason table gives.
export const fail = failureOf;

// A write of this attempt the file system refused: the run stops (every attempt is torn
// down) and this attempt fails as class environment, disk_full or io_error.
export function diskFault(a: Attempt, fault: DiskFault): AttemptFailureData {
  a.ctx.diskFailed(fault);
  return diskFailure(fault, a.rec.phase);
}

// What an error thrown inside the attempt means: a disk fault (the run stops); a write the
// file system refused for permission or a read-only mount (state_unwritable: the host's
// doing, never retried); else the engine's own failure. `path`: what the attempt was
// writing, when known.
export function thrownFailure(a: Attempt, e: unknown, path?: string): AttemptFailureData {
  const fault = diskFaultOf(e, path);
  if (fault !== undefined) return diskFault(a, fault);
  const message = maskSecrets(e instanceof Error ? e.message : String(e), a.ctx.secrets);
  const refused = refusedWrite(a, e, path);
  if (refused !== undefined) return fail('state_unwritable', a.rec.phase, `${refused.code}: cannot write ${refused.path}: ${message}`);
  return fail('internal_error', a.rec.phase, message);
}

const REFUSING = new Set(['EACCES', 'EPERM', 'EROFS']);

// A permission or read-only error from a write of the attempt: one `writing` made (`path`), or
// one thrown elsewhere whose path is in the run's evidence (what else it writes there is
// runplan's own state); EROFS anywhere, since only a write can meet it.
function refusedWrite(a: Attempt, e: unknown, path: string | undefined): { code: string; path: string } | undefined {
  const { code, path: at } = (e ?? {}) as { code?: unknown; path?: unknown };
  if (typeof code !== 'string' || !REFUSING.has(code)) return undefined;
  const own = typeof at === 'string' ? at : '';
  if (path !== undefined) return { code, path };
  if (code === 'EROFS' || own.startsWith(dirname(a.evidenceDir) + sep)) return { code, path: own };
  return undefined;
}

// One write of the attempt (evidence, its dirs): whatever the write throws becomes a failure.
export async function writing<T>(a: Attempt, path: string, write: () => Promise<T>): Promise<StepResult<T>> {
  try {
    return ok(await write());
  } catch (e) {
    return err(thrownFailure(a, e, path));
  }
}

// What a tool (git, workdir) said when its write failed, as a disk fault if it was one.
export function toolFault(a: Attempt, text: string, path: string): AttemptFailureData | undefined {
  const fault = diskFaultInText(text, path);
  return fault !== undefined ? diskFault(a, fault) : undefined;
}

// A git command that writes objects (add, commit) failing for the disk: the path is the
// repository's object store, the file system a later run checks for room.
export async function objectsFault(a: Attempt, c: Captured): Promise<AttemptFailureData | undefined> {
  const text = c.stderr.toString('utf8');
  if (diskFaultInText(text, '') === undefined) return undefined;
  const common = await commonDir(a.ctx.repo);
  return toolFault(a, text, join(common ?? join(a.ctx.repo, '.git'), 'objects'));
}

// An aborted run turns whatever a step saw into the one canonical interruption (undefined: not aborted).
export function interruption(a: Attempt, reason: SettleReason): AttemptFailureData | undefined {
  if (reason === 'interrupted' || a.ctx.signal.aborted) return fail('interrupted', a.rec.phase, 'the run was interrupted');
  return undefined;
}
