import { constants } from 'node:os';
import { isOwnershipMode } from './ownership-choice.js';
import { isOwnerTag } from './tag.js';
import type { SettleSpec, TransportError } from './types.js';

// What is wrong with a spec's own fields (settled as spawn_failed, `where: 'spec'`), or undefined.
export function specProblem(spec: SettleSpec): TransportError | undefined {
  const problem = (message: string): TransportError => ({ code: 'EINVAL', where: 'spec', message });
  if (spec.ownerTag !== undefined && !isOwnerTag(spec.ownerTag)) {
    return problem(`ownerTag ${JSON.stringify(spec.ownerTag)} is not [A-Za-z0-9_]{1,64}`);
  }
  for (const key of ['deadlineMs', 'graceMs', 'killAfterMs', 'stallMs'] as const) {
    const value: unknown = spec[key];
    if (value !== undefined && !isMilliseconds(value)) {
      return problem(`${key} ${String(value)} is not a finite number of milliseconds >= 0`);
    }
  }
  const mode = spec.ownership ?? 'auto';
  if (!isOwnershipMode(mode)) return problem(`ownership ${JSON.stringify(mode)} is not auto, cgroup or group+tag`);
  const killSignal = spec.killSignal ?? 'SIGTERM';
  if (!isSignalName(killSignal)) {
    return problem(`killSignal ${JSON.stringify(killSignal)} is not a signal name (SIGTERM, SIGINT, ...)`);
  }
  return undefined;
}

// A signal Node can send: its exact name (`SIGTERM`), never a number or another spelling.
export function isSignalName(value: unknown): value is NodeJS.Signals {
  return typeof value === 'string' && Object.hasOwn(constants.signals, value);
}

// A duration a caller may pass: a finite number of milliseconds, 0 or more (any length).
function isMilliseconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
