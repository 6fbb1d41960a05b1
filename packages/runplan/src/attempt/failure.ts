import { join } from 'node:path';
import type { Captured } from '@runplan/settle';
import type { AttemptFailureData, FailureClass, Phase } from '../events/types.js';
import { diskFailure, diskFaultInText, diskFaultOf, type DiskFault } from '../host/disk.js';
import { commonDir } from '../host/git.js';
import type { Attempt } from './record.js';

/** A step that failed: enough to close the attempt and to fingerprint it later. */
export class StepFailed {
  constructor(readonly failure: AttemptFailureData) {}
}

export function fail(cls: FailureClass, reason: string, phase: Phase, message: string, evidenceTail = ''): StepFailed {
  return new StepFailed({ class: cls, reason, phase, message, evidenceTail });
}

// A write of this attempt the file system refused: the run stops (every attempt is torn
// down) and this attempt fails as class environment, disk_full or io_error.
export function diskFault(a: Attempt, fault: DiskFault): StepFailed {
  a.ctx.diskFailed(fault);
  return new StepFailed(diskFailure(fault, a.rec.phase));
}

// One write of the attempt: a disk error becomes the attempt's (and the run's) failure.
export async function writing<T>(a: Attempt, path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    const fault = diskFaultOf(e, path);
    throw fault !== undefined ? diskFault(a, fault) : e;
  }
}

// What a tool (git, workdir) said when its write failed, as a disk fault if it was one.
export function toolFault(a: Attempt, text: string, path: string): StepFailed | undefined {
  const fault = diskFaultInText(text, path);
  return fault !== undefined ? diskFault(a, fault) : undefined;
}

// A git command that writes objects (add, commit) failing for the disk: the path is the
// repository's object store, the file system a later run checks for room.
export async function objectsFault(a: Attempt, c: Captured): Promise<StepFailed | undefined> {
  const text = c.stderr.toString('utf8');
  if (diskFaultInText(text, '') === undefined) return undefined;
  const common = await commonDir(a.ctx.repo);
  return toolFault(a, text, join(common ?? join(a.ctx.repo, '.git'), 'objects'));
}

// An aborted run turns whatever a step saw into the one canonical interruption.
export function interruptedCheck(a: Attempt, reason: string): void {
  if (reason === 'interrupted' || a.ctx.signal.aborted) throw fail('interrupted', 'interrupted', a.rec.phase, 'the run was interrupted');
}
