import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { ok, type Result } from '@runplan/common';
import { buildId } from '../host/build-id.js';
import { writeCacheFile } from '../host/cache-file.js';
import { jsonHoles, putBack, type JsonPath } from '../host/json-image.js';
import { planDigest, rememberDigests, sha256Hex, taskContractDigests } from './digest.js';
import type { PlanFiles } from './files.js';
import { readPlanText, validatePlanText } from './load.js';
import { planCopyText, rememberPlanCopyText, secretValues } from './secrets.js';
import type { Plan, PlanProblem } from './types.js';

/**
 * The plan cache: `run` keeps the plan it validated, with its digests, under the state root
 * (`.plan-cache/<sha256 of the plan's path>.json`), so that the next `run` of the same plan
 * (a resume, most often) neither parses nor validates nor digests it again: at 10 000 tasks
 * those are ~0.6 s. It is a cache, never the record: it is taken only when the plan file's
 * text and the text of every file it names are those it was made from (their sha256), when
 * its own checksum holds and when this very build made it (`buildId`); anything else and the
 * plan is read, validated and digested as before. A plan whose cached form would hold a
 * secret's value (an env_file's values, a `secret_env` variable) is never cached.
 * `RUNPLAN_PLAN_CACHE=0` turns it off.
 *
 * Layout: one JSON line of what it was made from (CacheMeta), then the plan as JSON with its
 * digests and the places of its `undefined`s, then the text of the run's `plan.json` for it
 * (planCopyText) when it was made with no secret to mask.
 */
interface CacheMeta {
  kind: typeof KIND;
  format: typeof FORMAT;
  code: string;
  /** The plan file (absolute) and the sha256 of its text. */
  file: string;
  sha256: string;
  /** Every file the plan names, with the sha256 of its text. */
  files: Array<[string, string]>;
  /** crc32 of everything after the meta line: the payload, then the plan.json text. */
  payloadCrc: number;
  payloadBytes: number;
  /** Bytes of the plan.json text after the payload (0: none, there was a secret to mask). */
  copyBytes: number;
}

interface Payload {
  plan: Omit<Plan, 'raw'>;
  holes: JsonPath[];
  planDigest: string;
  contracts: Array<[string, string]>;
}

const KIND = 'runplan-plan-cache';
const FORMAT = 1;

/** A plan as `run` loads it, and how to cache it once the slug lock is held (a no-op when it came from the cache or may not be kept). */
export interface CachedLoad {
  loaded: Result<Plan, PlanProblem[]>;
  fromCache: boolean;
  save: () => void;
}

const nothing = (): void => undefined;

export function planCachePath(stateRoot: string, planFile: string): string {
  return join(stateRoot, '.plan-cache', `${sha256Hex(planFile).slice(0, 32)}.json`);
}

// Loads `file` as loadPlan does, from the cache under `stateRoot` when it holds this plan.
// `stateRoot` is awaited only once the text is read (git is still being asked for it).
export async function loadPlanCached(
  file: string,
  stateRoot: Promise<string | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CachedLoad> {
  const path = resolve(file);
  const text = await readPlanText(path);
  if (!text.ok) return { loaded: text, fromCache: false, save: nothing };
  const root = env.RUNPLAN_PLAN_CACHE !== '0' && buildId() !== undefined ? await stateRoot : undefined;
  const cache = root === undefined ? undefined : planCachePath(root, path);
  const cached = cache === undefined ? undefined : readPlanCache(cache, path, text.value);
  if (cached !== undefined) return { loaded: ok(cached), fromCache: true, save: nothing };
  const seen: { files?: PlanFiles } = {};
  const loaded = await validatePlanText(text.value, path, seen);
  if (!loaded.ok || cache === undefined || seen.files === undefined) return { loaded, fromCache: false, save: nothing };
  const files = seen.files;
  return { loaded, fromCache: false, save: () => void writePlanCache(cache, { plan: loaded.value, text: text.value, files, env }) };
}

// Writes the cache of `plan`, validated from `text` and `files`; false when it was not
// written (a secret in it, a file that could not be read, no room…): the run goes on.
export function writePlanCache(path: string, made: { plan: Plan; text: string; files: PlanFiles; env?: NodeJS.ProcessEnv }): boolean {
  const { plan, text, files } = made;
  const named: Array<[string, string]> = [];
  for (const [file, read] of files.read) {
    if (!('text' in read)) return false;
    named.push([file, sha256Hex(read.text)]);
  }
  const { raw: _raw, ...kept } = plan;
  const holes = jsonHoles(kept);
  if (holes === undefined) return false;
  const contracts = taskContractDigests(plan);
  const digest = planDigest(plan);
  rememberDigests(plan, { plan: digest, contracts });
  let body: string;
  try {
    body = JSON.stringify({ plan: kept, holes, planDigest: digest, contracts: [...contracts] } satisfies Payload);
  } catch {
    return false; // a plan too large for one string
  }
  const secrets = secretValues(plan, made.env);
  if (secrets.some((secret) => body.includes(secret))) return false;
  const payload = Buffer.from(body, 'utf8');
  const copy = secrets.length === 0 ? Buffer.from(planCopyText(plan, made.env ?? process.env, secrets), 'utf8') : Buffer.alloc(0);
  const after = Buffer.concat([payload, copy]);
  const meta: CacheMeta = {
    kind: KIND,
    format: FORMAT,
    code: buildId() ?? '',
    file: plan.file,
    sha256: sha256Hex(text),
    files: named.sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    payloadCrc: crc32(after),
    payloadBytes: payload.length,
    copyBytes: copy.length,
  };
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch {
    return false;
  }
  const written = writeCacheFile(path, Buffer.concat([Buffer.from(`${JSON.stringify(meta)}\n`, 'utf8'), after]));
  if (written) prune(dirname(path), path);
  return written;
}

/** How many plan files a state root keeps caches of; the least recently written go first. */
export const KEPT_PLAN_CACHES = 32;
/** A temp file a writer left this long ago (it crashed mid-write) is removed. */
const STALE_TEMP_MS = 3600_000;

// Keeps the cache dir bounded (a state root used with many generated plan files, say): all
// but the KEPT_PLAN_CACHES most recently written caches (`just` among them) are removed,
// and any temp file older than an hour.
function prune(dir: string, just: string): void {
  try {
    const now = Date.now();
    const caches: Array<[string, number]> = [];
    for (const name of readdirSync(dir)) {
      const file = join(dir, name);
      const mtime = statSync(file).mtimeMs;
      if (name.endsWith('.tmp')) {
        if (now - mtime > STALE_TEMP_MS) rmSync(file, { force: true });
      } else if (file !== just) caches.push([file, mtime]);
    }
    caches.sort((a, b) => b[1] - a[1]);
    for (const [file] of caches.slice(KEPT_PLAN_CACHES - 1)) rmSync(file, { force: true });
  } catch {
    // A cache: what was not removed now is removed by a later write.
  }
}

// The plan cached at `path` for the plan file `file` whose text is `text`, when the cache
// holds exactly that plan (see the top); undefined otherwise.
export function readPlanCache(path: string, file: string, text: string): Plan | undefined {
  try {
    const bytes = readFileSync(path);
    const nl = bytes.indexOf(0x0a);
    if (nl < 0) return undefined;
    const meta = JSON.parse(bytes.toString('utf8', 0, nl)) as Partial<CacheMeta> | null;
    if (meta === null || typeof meta !== 'object' || meta.kind !== KIND || meta.format !== FORMAT) return undefined;
    if (meta.code !== buildId() || meta.file !== file || meta.sha256 !== sha256Hex(text) || !Array.isArray(meta.files)) return undefined;
    for (const [named, digest] of meta.files) if (sha256Hex(readFileSync(named, 'utf8')) !== digest) return undefined;
    const after = bytes.subarray(nl + 1);
    const { payloadBytes, copyBytes } = meta;
    if (!Number.isSafeInteger(payloadBytes) || !Number.isSafeInteger(copyBytes)) return undefined;
    if (after.length !== payloadBytes! + copyBytes! || crc32(after) !== meta.payloadCrc) return undefined;
    const read = JSON.parse(after.toString('utf8', 0, payloadBytes)) as Payload;
    for (const hole of read.holes) putBack(read.plan, hole);
    const plan: Plan = { ...read.plan, raw: undefined };
    if (plan.file !== file || plan.tasks.length !== read.contracts.length) return undefined;
    rememberDigests(plan, { plan: read.planDigest, contracts: new Map(read.contracts) });
    if (copyBytes! > 0) rememberPlanCopyText(plan, after.toString('utf8', payloadBytes));
    return plan;
  } catch {
    return undefined; // none, unreadable, or not one this code wrote: read the plan itself
  }
}
