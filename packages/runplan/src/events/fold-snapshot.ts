import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { JournalPosition } from '@runplan/journal';
import { buildId } from '../host/build-id.js';
import { writeCacheFile } from '../host/cache-file.js';
import { jsonHoles, putBack, type JsonPath } from '../host/json-image.js';
import { emptyHistory, recordFailure } from '../repair/index.js';
import { AttemptLog } from './attempt-log.js';
import { DurableRounds } from './durable-rounds.js';
import { markSettled, openAttemptOf } from './open-attempt.js';
import { readEvent, taskCountOf } from './read.js';
import { RunSpend } from './spend.js';
import { nextStep } from './task-step.js';
import { threadTotalsOf } from './thread-totals.js';
import { addUsage } from './usage.js';
import { RunView } from './view.js';

/**
 * A fold snapshot: the RunView of a journal's first `size` bytes, written beside the journal
 * (`journal.jsonl.fold`) by the coordinator as the journal grows, so that reading the journal
 * back parses and folds only the records after it. It is a cache, never the record: it is
 * taken only when the bytes it was made from are still the journal's first `size` bytes
 * (their sha256, which the writer kept as it wrote them), when its own checksum holds and
 * when it was made by this very fold code; anything else and the journal is read in full.
 * Every line before `size` is still checked (checksum, seq, chain) as the journal is read.
 *
 * Layout: one JSON line of what it covers (SnapshotMeta), then the fold's fields as JSON:
 * each RunView field (and each field of the parts it is made of) tagged with how it is held
 * (a Map or a Set as its entries), plus the paths of the `undefined`s JSON would drop.
 */
export interface SnapshotMeta {
  kind: typeof KIND;
  format: typeof FORMAT;
  /** The fold code it was made by (foldCode). */
  code: string;
  lastSeq: number;
  size: number;
  sha256: string;
  /** crc32 and length of the payload after the meta line. */
  payloadCrc: number;
  payloadBytes: number;
}

const KIND = 'runplan-fold';
const FORMAT = 1;
/** The parts of a RunView that are classes of their own: their fields are written one by one. */
const PARTS = [AttemptLog, DurableRounds, RunSpend] as const;

type Field = ['map', unknown[]] | ['set', unknown[]] | ['value', unknown] | ['part', Record<string, Field>];

export function snapshotPath(journal: string): string {
  return `${journal}.fold`;
}

let code: string | undefined;

// Which fold code made a snapshot: a snapshot made by other fold code (another runplan version
// or build) could hold what this code would not have made. In the bundle, the build's id
// (dist/lib/build-id.js, the sha256 of every file of the build): the CLI (one CommonJS file)
// and the library (ES modules) are the same sources in two texts, and take each other's
// snapshots. Unbundled (dist/src), a digest of the source of everything the fold runs.
export function foldCode(): string {
  code ??= createHash('sha256').update(foldIdentity()).digest('hex').slice(0, 32);
  return code;
}

// What foldCode digests: the build's id when there is one, else the fold's own source.
function foldIdentity(): string {
  const build = buildId();
  if (build !== undefined) return `${FORMAT}\0build ${build}`;
  const sources = [
    RunView,
    ...PARTS,
    nextStep,
    openAttemptOf,
    markSettled,
    recordFailure,
    emptyHistory,
    threadTotalsOf,
    readEvent,
    taskCountOf,
    addUsage,
  ];
  return `${FORMAT}\0${sources.map(String).join('\0')}`;
}

// The fields of a RunView (or of one of its parts), each tagged with how it is held.
function fieldsOf(o: object): Record<string, Field> {
  const out: Record<string, Field> = {};
  for (const [key, value] of Object.entries(o)) {
    if (value instanceof Map) out[key] = ['map', [...value]];
    else if (value instanceof Set) out[key] = ['set', [...value]];
    else if (PARTS.some((Part) => value instanceof Part)) out[key] = ['part', fieldsOf(value as object)];
    else out[key] = ['value', value];
  }
  return out;
}

// The snapshot's bytes for `view` at `at`, or undefined when the fold holds something JSON would not give back.
export function encodeSnapshot(view: RunView, at: JournalPosition): Buffer | undefined {
  const fields = fieldsOf(view);
  const holes = jsonHoles(fields);
  if (holes === undefined) return undefined;
  const payload = Buffer.from(JSON.stringify({ fields, holes }), 'utf8');
  const meta: SnapshotMeta = {
    kind: KIND,
    format: FORMAT,
    code: foldCode(),
    lastSeq: at.lastSeq,
    size: at.size,
    sha256: at.sha256,
    payloadCrc: crc32(payload),
    payloadBytes: payload.length,
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(meta)}\n`, 'utf8'), payload]);
}

// Writes the snapshot of `view` at `at` beside the journal (writeCacheFile: whole or not at
// all, never where the journal needs the room). False when none was written: it is a cache,
// and a run goes on without it.
export function writeSnapshot(journal: string, view: RunView, at: JournalPosition): boolean {
  let bytes: Buffer | undefined;
  try {
    bytes = encodeSnapshot(view, at);
  } catch {
    return false; // a fold too large for one string, say
  }
  return bytes !== undefined && writeCacheFile(snapshotPath(journal), bytes);
}

// The meta line of the journal's snapshot when it is one this code made (undefined: none, or another's).
export function readSnapshotMeta(journal: string): SnapshotMeta | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(snapshotPath(journal), 'r');
    const head = Buffer.alloc(1024);
    const n = readSync(fd, head, 0, head.length, 0);
    const nl = head.subarray(0, n).indexOf(0x0a);
    return nl < 0 ? undefined : metaOf(head.subarray(0, nl));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function metaOf(line: Buffer): SnapshotMeta | undefined {
  const m = JSON.parse(line.toString('utf8')) as Partial<SnapshotMeta> | null;
  if (m === null || typeof m !== 'object' || m.kind !== KIND || m.format !== FORMAT || m.code !== foldCode()) return undefined;
  const counts = [m.lastSeq, m.size, m.payloadCrc, m.payloadBytes];
  if (!counts.every((n) => Number.isSafeInteger(n) && (n as number) >= 0) || typeof m.sha256 !== 'string') return undefined;
  return m as SnapshotMeta;
}

/** A snapshot read back: the fold it holds and what it covers (trusted only once the journal's prefix is checked against `meta`). */
export interface Snapshot {
  view: RunView;
  meta: SnapshotMeta;
}

// The journal's snapshot, when there is one this code made whose checksum holds; undefined otherwise.
export function readSnapshot(journal: string): Snapshot | undefined {
  try {
    const bytes = readFileSync(snapshotPath(journal));
    const nl = bytes.indexOf(0x0a);
    if (nl < 0) return undefined;
    const meta = metaOf(bytes.subarray(0, nl));
    const payload = bytes.subarray(nl + 1);
    if (meta === undefined || payload.length !== meta.payloadBytes || crc32(payload) !== meta.payloadCrc) return undefined;
    const { fields, holes } = JSON.parse(payload.toString('utf8')) as { fields: Record<string, Field>; holes: JsonPath[] };
    for (const hole of holes) putBack(fields, hole);
    const view = new RunView();
    return restore(view, fields) ? { view, meta } : undefined;
  } catch {
    return undefined;
  }
}

// Puts the fields back into a fresh object of the same class; false when they are not
// exactly its fields (another shape of fold).
function restore(target: object, fields: Record<string, Field>): boolean {
  const fresh = target as Record<string, unknown>;
  const keys = Object.keys(fresh);
  if (keys.length !== Object.keys(fields).length) return false;
  for (const key of keys) {
    const field = fields[key];
    const now = fresh[key];
    if (field === undefined) return false;
    const [kind, value] = field;
    if (kind === 'map' && now instanceof Map) for (const [k, v] of value as Array<[unknown, unknown]>) now.set(k, v);
    else if (kind === 'set' && now instanceof Set) for (const v of value as unknown[]) now.add(v);
    else if (kind === 'part' && PARTS.some((Part) => now instanceof Part)) {
      if (!restore(now as object, value as Record<string, Field>)) return false;
    } else if (kind === 'value' && !(now instanceof Map || now instanceof Set)) fresh[key] = value;
    else return false;
  }
  return true;
}
