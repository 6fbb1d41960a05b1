import { readFile } from 'node:fs/promises';
import { SHARE_ENV, Worker } from 'node:worker_threads';
import type { Result } from '@runplan/common';
import { derivePlan, slugHint, slugInText, type PlanDerived, type PrepareMessage } from './derived.js';
import { loadPlan } from './load.js';
import type { Plan, PlanProblem } from './types.js';

/**
 * A plan being loaded on a worker thread (plan/prepare-worker.ts), so that a run's main
 * thread can read the slug's journals meanwhile: the 10k-task plan's validation, contract
 * digests, plan digest and plan copy (each key-sorts every task) are then not on the resume's
 * critical path. Everything it gives equals what loadPlan and derivePlan give on the main
 * thread; when the worker cannot start or fails, they are computed here instead.
 */
export interface PreparedPlan {
  /** The slug the plan file names, as soon as it parses (slugHint: not validated); undefined when it does not parse. */
  slug: Promise<string | undefined>;
  /** loadPlan's answer. */
  loaded: Promise<Result<Plan, PlanProblem[]>>;
  /** derivePlan(plan) of the loaded plan (computed in the worker while the main thread works). */
  derived(plan: Plan): Promise<PlanDerived>;
  /** Stops the worker if it is still running (a refusal needs none of what it computes). */
  close(): void;
}

/** Where the worker's module is: beside this one, in dist/src/plan and in the bundle's dist/lib alike. */
const WORKER = new URL('./prepare-worker.js', import.meta.url);

// Settles a promise from outside (the worker's messages come as events).
function deferred<T>(): { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void } {
  let resolve!: (value: T | PromiseLike<T>) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

// Loads the plan on the main thread: the fallback, and the path without a worker.
function prepareHere(file: string): PreparedPlan {
  const slug = deferred<string | undefined>();
  const loaded = loadPlan(file, (raw) => slug.resolve(slugHint(raw)));
  void loaded.then(
    () => slug.resolve(undefined),
    () => slug.resolve(undefined),
  );
  return { slug: slug.promise, loaded, derived: (plan) => Promise.resolve(derivePlan(plan)), close: () => undefined };
}

// Starts loading `file` (see PreparedPlan). `worker`: the worker module (tests point it at
// one that cannot load, to take the fallback).
export function preparePlan(file: string, opts: { worker?: URL } = {}): PreparedPlan {
  let worker: Worker;
  try {
    worker = new Worker(opts.worker ?? WORKER, { workerData: { file }, env: SHARE_ENV });
  } catch {
    return prepareHere(file);
  }
  const slug = deferred<string | undefined>();
  // The file's text names the slug sooner than the worker can parse it (the worker has to start first).
  readFile(file, 'utf8').then(
    (text) => {
      const hint = slugInText(text);
      if (hint !== undefined) slug.resolve(hint);
    },
    () => undefined,
  );
  const loaded = deferred<Result<Plan, PlanProblem[]>>();
  const derived = deferred<PlanDerived | undefined>();
  let got: PrepareMessage['kind'] | undefined;
  worker.on('message', (m: PrepareMessage) => {
    got = m.kind;
    if (m.kind === 'slug') slug.resolve(m.slug);
    else if (m.kind === 'loaded') {
      slug.resolve(undefined);
      loaded.resolve(m.loaded);
      if (!m.loaded.ok) derived.resolve(undefined);
    } else derived.resolve(m.derived);
  });
  // The worker failed or ended early: whatever it did not answer is computed here.
  const fallBack = (): void => {
    slug.resolve(undefined);
    if (got === undefined || got === 'slug') loaded.resolve(loadPlan(file));
    derived.resolve(undefined);
  };
  worker.on('error', fallBack);
  worker.on('exit', fallBack);
  return {
    slug: slug.promise,
    loaded: loaded.promise,
    derived: async (plan) => (await derived.promise) ?? derivePlan(plan),
    close: () => void worker.terminate(),
  };
}
