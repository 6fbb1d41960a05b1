import { parentPort, workerData } from 'node:worker_threads';
import { derivePlan, slugHint, type PrepareMessage } from './derived.js';
import { loadPlan } from './load.js';

// The plan worker (started by plan/prepare.ts): loads and validates the plan off the main
// thread, and derives what a run computes from it, while the main thread reads the slug's
// journals. Posts the slug as soon as the file parses, then the plan, then the derived values.
const port = parentPort;
if (port !== null) {
  const post = (message: PrepareMessage): void => port.postMessage(message);
  const { file } = workerData as { file: string };
  const loaded = await loadPlan(file, (raw) => post({ kind: 'slug', slug: slugHint(raw) }));
  post({ kind: 'loaded', loaded });
  if (loaded.ok) post({ kind: 'derived', derived: derivePlan(loaded.value) });
}
