import { constants } from 'node:os';
import type { RunCompleteData, RunFailedData } from './types.js';

/**
 * The run's one terminal receipt: `run-complete` or `run-failed`. The journal refuses a
 * second terminal record; this guard makes the coordinator never even try.
 */
export class ReceiptGuard {
  #written = false;
  constructor(private readonly appendTerminal: (type: string, data: Record<string, unknown>) => Promise<unknown>) {}
  get written(): boolean {
    return this.#written;
  }
  async complete(data: RunCompleteData): Promise<void> {
    await this.#write('run-complete', data as unknown as Record<string, unknown>);
  }
  async failed(data: RunFailedData): Promise<void> {
    await this.#write('run-failed', data as unknown as Record<string, unknown>);
  }
  async #write(type: string, data: Record<string, unknown>): Promise<void> {
    if (this.#written) throw new Error('runplan: a terminal receipt was already written for this run');
    this.#written = true;
    await this.appendTerminal(type, data);
  }
}

// The human summary of a receipt, for stderr (one line, then evidence lines).
export function receiptSummary(type: 'run-complete' | 'run-failed', data: RunCompleteData | RunFailedData, journal: string): string[] {
  if (type === 'run-complete') {
    const d = data as RunCompleteData;
    const lines = [
      `runplan: complete: ${d.tasks} task(s), ${d.attempts} attempt(s) in ${seconds(d.durationMs)}; ${d.branch} at ${d.resultCommit.slice(0, 12)}`,
    ];
    if (d.landed !== null) lines.push(`  landed: ${d.landed}`);
    lines.push(...refWarnings(d));
    lines.push(`  journal: ${journal}`);
    return lines;
  }
  const d = data as RunFailedData;
  // An interruption after a task had failed on its own: the task is that failure, not the
  // interruption's, and is said apart with its own class and reason.
  const first = d.firstFailure;
  const where = [
    d.task !== null && first === undefined ? `task ${d.task}` : undefined,
    d.phase !== null && first === undefined ? `phase ${d.phase}` : undefined,
    `class ${d.class}`,
  ]
    .filter((x) => x !== undefined)
    .join(', ');
  const lines = [`runplan: ${d.reason}: ${where}: ${d.message}`];
  if (first !== undefined) lines.push(`  first failure: task ${first.task}, phase ${first.phase}, class ${first.class} (${first.reason})`);
  for (const path of d.evidence) lines.push(`  evidence: ${path}`);
  if (d.failed !== undefined && d.failed.length > 1) lines.push(`  failed: ${d.failed.map((f) => `${f.task} (${f.reason})`).join(', ')}`);
  if (d.notDispatched !== undefined && d.notDispatched.length > 0)
    lines.push(`  not dispatched: ${d.notDispatched.map((n) => `${n.task} (needs ${n.because})`).join(', ')}`);
  lines.push(...refWarnings(d));
  lines.push(`  journal: ${journal}`);
  if (d.detail !== undefined && d.reason === 'disk_full')
    lines.push(
      `  hint: make room on the file system of ${d.detail.path}, then run the same command again (it checks min_free first; no --retry needed)`,
    );
  if (d.detail !== undefined && d.reason === 'io_error')
    lines.push(`  hint: check the device holding ${d.detail.path}, then run the same command again (no --retry needed)`);
  return lines;
}

// One warning line per ref git would not write or delete during the run.
function refWarnings(d: RunCompleteData | RunFailedData): string[] {
  return (d.refsFailed ?? []).map((f) => `  warning: ref_failed: could not ${f.op} ${f.ref}: ${f.message}`);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/**
 * The exit code of a run interrupted by a signal: 128 + its number, as a shell reports a
 * process the signal killed (SIGHUP, the terminal closed, 129; SIGINT 130; SIGTERM 143).
 * No signal named: 143, as for SIGTERM.
 */
export function interruptedExitCode(signal: string | null | undefined): number {
  const number = signal == null ? undefined : (constants.signals as Record<string, number | undefined>)[signal];
  return 128 + (number ?? constants.signals.SIGTERM);
}
