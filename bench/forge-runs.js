// Forged run state for the measures that read it back (status-read, report-write): a real
// run's directory copied under new run ids, its journal re-encoded record by record with
// the new id and a fresh chain, so every copy is a journal the coordinator could have written.
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The run id of the i-th forged run: one minute apart, in the format state.ts accepts.
export function forgedRunId(i) {
  const at = new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString();
  const stamp = at.slice(0, 19).replace(/[-:]/g, '');
  return `${stamp}Z-${(i % 0x10000).toString(16).padStart(4, '0')}`;
}

/**
 * Copies the run dir `source` (of run `sourceId`) to `<slugDir>/<runId>`, rewriting its
 * journal: every mention of the old id becomes the new one, the header takes `startOrder`
 * and a salt of its own, and each record is re-encoded with the journal's own encoder so
 * the checksums and the prev chain are valid.
 */
export async function cloneRun({ source, sourceId, slugDir, runId, startOrder }) {
  const { encodeRecord } = await import('@runplan/journal');
  const dest = join(slugDir, runId);
  rmSync(dest, { recursive: true, force: true });
  cpSync(source, dest, { recursive: true });
  const lines = readFileSync(join(source, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);
  let prev = '00000000';
  const out = lines.map((line) => {
    const record = JSON.parse(line.slice(9).replaceAll(sourceId, runId));
    if (record.seq === 0) Object.assign(record.data, { startOrder, salt: startOrder.toString(16).padStart(32, '0') });
    const encoded = encodeRecord({ ...record, prev });
    prev = encoded.crc;
    return encoded.bytes;
  });
  writeFileSync(join(dest, 'journal.jsonl'), Buffer.concat(out), { mode: 0o600 });
  return dest;
}
