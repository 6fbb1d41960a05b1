// Test-only helpers: build a real journal, then take it apart byte by byte.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeRecord, openWriter, type JournalFs, type JournalRecord } from '../src/index.js';
import { nodeJournalFs } from '../src/fs.js';

export interface Sample {
  path: string;
  bytes: Buffer;
  /** Each line with its newline. */
  lines: Buffer[];
  /** Byte offset where each line starts. */
  offsets: number[];
}

// Writes a journal with a header and `count` small records through the real writer.
export async function writeSample(dir: string, name = 'j.jsonl', count = 4, runId = 'sample'): Promise<Sample> {
  const path = join(dir, name);
  const opened = await openWriter(path, { create: true, runId });
  if (!opened.ok) throw new Error(opened.error.message);
  for (let i = 1; i <= count; i++) await opened.value.append('step-done', { i, note: `record ${i}` });
  await opened.value.close();
  return sampleOf(path);
}

export function sampleOf(path: string): Sample {
  const bytes = readFileSync(path);
  const lines: Buffer[] = [];
  const offsets: number[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
    offsets.push(start);
    lines.push(bytes.subarray(start, nl + 1));
    start = nl + 1;
  }
  return { path, bytes, lines, offsets };
}

// The line a record would be written as (prefix, JSON, newline).
export function lineOf(record: JournalRecord): Buffer {
  return encodeRecord(record).bytes;
}

// The record a sample line holds.
export function recordOf(line: Buffer): JournalRecord {
  return JSON.parse(line.subarray(9).toString('utf8')) as JournalRecord;
}

export function crcOf(line: Buffer): string {
  return line.toString('latin1', 0, 8);
}

export type FsCall = { op: 'write'; bytes: Buffer } | { op: 'fdatasync' | 'fsync' | 'ftruncate' | 'open' | 'close'; done: boolean };

// A JournalFs that logs every call (and when fdatasync returned), optionally failing writes.
export function recordingFs(options: { failWrite?: (call: number) => NodeJS.ErrnoException | undefined } = {}) {
  const log: (FsCall | { op: 'resolved'; seq: number })[] = [];
  let writes = 0;
  const fs: JournalFs = {
    ...nodeJournalFs,
    async write(fd, buffer, offset, length) {
      writes += 1;
      const failure = options.failWrite?.(writes);
      if (failure) throw failure;
      const written = await nodeJournalFs.write(fd, buffer, offset, length);
      log.push({ op: 'write', bytes: Buffer.from(buffer.subarray(offset, offset + written)) });
      return written;
    },
    async fdatasync(fd) {
      log.push({ op: 'fdatasync', done: false });
      await nodeJournalFs.fdatasync(fd);
      log.push({ op: 'fdatasync', done: true });
    },
  };
  return { fs, log, writeCount: () => writes };
}
