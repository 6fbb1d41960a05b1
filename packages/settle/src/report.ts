import { closeSync, fsyncSync, openSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isStreamTarget } from '@runplan/common';
import type { Execution } from './types.js';

/** The one JSON object `settle --report FILE` writes. */
export interface SettleReport {
  argv: readonly string[];
  reason: Execution['reason'];
  /** What settle itself exited with (GNU timeout convention). */
  settleExitCode: number;
  /** The child's own exit code, null when it was killed or never ran. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  pid: number | null;
  durationMs: number;
  deadlineMs: number | null;
  graceMs: number;
  stallMs: number | null;
  teardown: Execution['teardown'];
  /** The first transport error (EPIPE writing the prompt, ENOENT at spawn…), null when none. */
  error: { code: string; where: string | null; message: string } | null;
  bytesIn: number;
  bytesOut: number;
  tag: string;
  /** How the command was owned: `cgroup` or `group+tag`. */
  ownership: Execution['ownership'];
  /** Why `auto` fell back to `group+tag` (`{reason, message}`), null otherwise. */
  ownershipFallback: NonNullable<Execution['ownershipFallback']> | null;
  /** The command's cgroup, null in group+tag mode. */
  cgroup: string | null;
}

export function reportOf(argv: readonly string[], e: Execution, settleExitCode: number): SettleReport {
  return {
    argv,
    reason: e.reason,
    settleExitCode,
    exitCode: e.exitCode,
    signal: e.signal,
    pid: e.pid ?? null,
    durationMs: e.durationMs,
    deadlineMs: e.deadlineMs ?? null,
    graceMs: e.graceMs,
    stallMs: e.stallMs ?? null,
    teardown: e.teardown,
    error: e.error ? { code: e.error.code, where: e.error.where ?? null, message: e.error.message } : null,
    bytesIn: e.bytesIn,
    bytesOut: e.bytesOut,
    tag: e.tag,
    ownership: e.ownership,
    ownershipFallback: e.ownershipFallback ?? null,
    cgroup: e.cgroup ?? null,
  };
}

export const reportText = (report: SettleReport): string => JSON.stringify(report, null, 2) + '\n';

// Writes the report whole or not at all (write-file-atomic, loaded only when asked), then
// fsyncs the directory. A path that names a pipe or a device (`--report /dev/stdout | jq`)
// cannot be renamed over: the JSON is written into it directly.
export async function writeReport(path: string, report: SettleReport): Promise<void> {
  if (isStreamTarget(path)) {
    writeFileSync(path, reportText(report));
    return;
  }
  const { default: writeFileAtomic } = await import('write-file-atomic');
  await writeFileAtomic(path, reportText(report), { mode: 0o644 });
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
