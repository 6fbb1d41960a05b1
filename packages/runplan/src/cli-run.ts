import { printProblems, runOptions } from './cli-support.js';
import { unreachable } from '@runplan/common';
import { readJournal } from '@runplan/journal';
import { runPlan } from './coordinator/run-plan.js';
import type { RunEnd } from './coordinator/types.js';
import { Progress, type SafeOutput } from './observe/progress.js';
import { interruptedExitCode, receiptSummary } from './events/receipt.js';
import { showControls } from './observe/terminal-text.js';
import { writeRunReport } from './observe/report.js';
import { stopWithTheJob } from './cli-job-stop.js';

// `runplan run` and `demo` at the terminal: signals, progress, the end as one exit code.

// `runplan run` (and demo): signals become one AbortSignal; progress observes; the end
// becomes one exit code.
export async function runCommand(planFile: string, o: Record<string, unknown>, stdout: SafeOutput, stderr: SafeOutput): Promise<number> {
  const options = runOptions(o);
  const controller = new AbortController();
  const progress = new Progress({
    stderr,
    stdout,
    json: o.json === true,
    table: process.stderr.isTTY === true,
    size: () => ({ columns: process.stderr.columns ?? 0, rows: process.stderr.rows ?? 0 }),
  });
  // Each signal is said at once: the teardown takes up to each attempt's grace, and a table
  // that went on showing "running" read as a Ctrl-C that was not heard.
  let heard = 0;
  const interrupt = (signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP') => () => {
    heard += 1;
    progress.notice(
      heard === 1
        ? `runplan: ${signal}: stopping the running attempts (TERM, then KILL after each one's grace), then the receipt`
        : `runplan: ${signal} again: already stopping; each attempt gets its grace, then KILL`,
    );
    controller.abort(signal);
  };
  const onSigint = interrupt('SIGINT');
  const onSigterm = interrupt('SIGTERM');
  // The terminal closed (a hung-up ssh session, a closed tmux pane): torn down and a receipt
  // like SIGTERM, never Node's default of dying at once with the attempts left running.
  const onSighup = interrupt('SIGHUP');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  process.on('SIGHUP', onSighup);
  let runId: string | undefined;
  const stopListening = stopWithTheJob(() => runId);
  try {
    const end = await runPlan({
      planFile,
      ...options,
      signal: controller.signal,
      onRecord: (r) => progress.record(r),
      onLiveUsage: (u) => progress.live(u),
      onNotice: (line) => progress.notice(line),
      onStart: async (info) => {
        runId = info.runId;
        progress.tasks(info.tasks, { postRun: info.postRun, preRun: info.preRun, budget: info.budget, rounds: info.rounds });
        // A resumed run's tasks done before the crash: the table and its footer count them
        // (the coordinator's fold holds them; read from the journal when there is none).
        if (info.view !== undefined) progress.follow(info.view);
        else if (info.resumed) progress.earlier((await readJournal(info.journal)).records);
      },
    });
    progress.close();
    for (const line of describeEnd(end)) stderr.write(showControls(line) + '\n');
    if (end.kind === 'complete' || end.kind === 'failed') {
      const report = await writeRunReport(end.journal, end.view, end.planCopy);
      if (report !== undefined) stderr.write(`  report: ${report}\n`);
    }
    return exitCodeOf(end);
  } finally {
    progress.close();
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
    process.off('SIGHUP', onSighup);
    stopListening();
  }
}

// What people read on stderr when `run` ends.
export function describeEnd(end: RunEnd): string[] {
  switch (end.kind) {
    case 'invalid_plan': {
      const lines: string[] = [];
      printProblems(end.file, end.problems, (l) => lines.push(l));
      return lines;
    }
    case 'refused':
      return [`runplan: ${end.reason}: ${end.message}`, ...(end.hint !== undefined ? [`  hint: ${end.hint}`] : [])];
    case 'locked':
      return [`runplan: lock_held: ${end.message}`, `  hint: runplan status ${end.slug}; runplan stop ${end.slug}`];
    case 'journal_failed':
      return [
        `runplan: journal_failed: ${end.message}`,
        '  hint: the run is left incomplete; fix the disk, then run the same command again',
      ];
    case 'complete':
      return receiptSummary('run-complete', end.receipt, end.journal);
    case 'up_to_date':
      return [
        `runplan: up to date: run ${end.runId}, ${end.resultCommit}`,
        '  hint: nothing changed in the task contracts or the base; --new-run starts a new run anyway',
      ];
    case 'failed':
      return receiptSummary('run-failed', end.receipt, end.journal);
    default:
      unreachable(end);
  }
}

// The one mapping from how a run ended to its exit code.
export function exitCodeOf(end: RunEnd): number {
  switch (end.kind) {
    case 'complete':
    case 'up_to_date':
      return 0;
    case 'failed':
      if (end.receipt.class !== 'interrupted') return 1;
      return interruptedExitCode(end.receipt.signal);
    case 'invalid_plan':
      return 2;
    case 'refused':
      return 3;
    case 'locked':
      return 4;
    case 'journal_failed':
      return 5;
    default:
      return unreachable(end);
  }
}
