import { unreachable } from '@runplan/common';
import type { SafeOutput } from './observe/progress.js';
import { receiptSummary } from './events/receipt.js';
import type { StopEnd } from './observe/stop.js';
import type { RunCompleteData, RunFailedData } from './events/types.js';
import type { JournalRecord } from '@runplan/journal';

// `runplan stop` at the terminal: what it printed and its exit code.

// What people (stderr) and scripts (stdout: the receipt as JSON) read when `stop` ends.
export function reportStop(end: StopEnd, stdout: SafeOutput, say: (line: string) => void): void {
  const printReceipt = (receipt: JournalRecord, journal: string) => {
    stdout.write(JSON.stringify(receipt) + '\n');
    for (const line of receiptSummary(
      receipt.type as 'run-complete' | 'run-failed',
      receipt.data as unknown as RunCompleteData & RunFailedData,
      journal,
    ))
      say(line);
  };
  switch (end.kind) {
    case 'not_running':
      say(`runplan: not_running: no live coordinator and no incomplete run for slug ${end.slug}`);
      return;
    case 'still_running':
      say(`runplan: still_running: pid ${end.holder.pid} did not exit within ${Math.round(end.waitedMs / 1000)}s of SIGTERM`);
      return;
    case 'stopped':
      printReceipt(end.receipt, end.journal);
      return;
    case 'no_receipt':
      say(`runplan: stopped: pid ${end.holder.pid} exited without a receipt; what it left is dealt with as after a crash`);
      reportStop(end.after, stdout, say);
      return;
    case 'locked':
      say(`runplan: lock_held: ${end.message}`);
      return;
    case 'lock_failed':
      say(`runplan: ${end.reason}: cannot take the lock of slug ${end.slug}: ${end.message}; nothing was touched`);
      return;
    case 'after_crash':
      for (const run of end.runs) {
        const ended =
          run.ended.length > 0
            ? `ended ${run.ended.length} process(es) its crashed coordinator left running: ${run.ended.join(' ')}`
            : 'no process of it was alive';
        say(`runplan: stopped_after_crash: run ${run.runId}: ${ended}`);
        if (run.jobsCancelled.length > 0)
          say(
            `runplan: jobs_cancelled: run ${run.runId}: cancelled ${run.jobsCancelled.length} Slurm job(s): ${run.jobsCancelled.join(' ')}`,
          );
        if (run.jobsLeft.length > 0)
          say(
            `runplan: slurm_cancel_failed: run ${run.runId}: still queued after scancel: ${run.jobsLeft.join(' ')}; the run is left incomplete`,
          );
        if (run.survivors.length > 0)
          say(
            `runplan: teardown_failed: run ${run.runId}: still alive after SIGKILL: ${run.survivors.join(' ')}; the run is left incomplete`,
          );
        if (run.error !== undefined)
          say(
            `runplan: ${run.error.reason}: ${run.error.message}\n  hint: the run is left incomplete; runplan run PLAN --fresh abandons it`,
          );
        if (run.receipt !== undefined) printReceipt(run.receipt, run.journal);
        if (run.report !== undefined) say(`  report: ${run.report}`);
      }
      return;
    default:
      unreachable(end);
  }
}

// The one mapping from how `stop` ended to its exit code. After a crash, survivors outrank
// a journal that could not be written: processes still spending are the graver news.
export function stopExitCode(end: StopEnd): number {
  switch (end.kind) {
    case 'stopped':
      return 0;
    case 'no_receipt':
      // It is stopped; a run it left without a receipt decides the rest (none left: 0).
      return end.after.kind === 'not_running' ? 0 : stopExitCode(end.after);
    case 'not_running':
      return 1;
    case 'still_running':
      return 3;
    case 'locked':
      return 4;
    case 'lock_failed':
      return 5;
    case 'after_crash':
      if (end.runs.some((r) => r.survivors.length > 0 || r.jobsLeft.length > 0)) return 3;
      if (end.runs.some((r) => r.error !== undefined)) return 5;
      return 0;
    default:
      return unreachable(end);
  }
}

// `14:02:11` (local time) for an ISO time: when a run was last heard from.
export function clockTime(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toTimeString().slice(0, 8);
}
