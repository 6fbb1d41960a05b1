import { capture, findTagged, stream, teardownTagged } from '@runplan/settle';
import type { Executor } from './contract.js';

// `local`: settle on this host, exactly as before executors existed (its journal records
// are the same). Owned work is the processes carrying the ownerTag in their environment.
export const localExecutor: Executor = {
  kind: 'local',
  stream: (spec, initialState, consume) => stream(spec, initialState, consume),
  capture: (spec) => capture(spec),
  listByOwner: async (prefix) =>
    findTagged({ prefixes: [prefix], tags: [] }).map((p) => ({ id: String(p.pid), ownerTag: prefix, state: 'running' })),
  teardownByOwner: async (prefix, graceMs) => {
    const report = await teardownTagged({ prefixes: [prefix], tags: [] }, { graceMs });
    return { ended: report.signalled.map(String), survivors: report.survivors.map(String) };
  },
};
