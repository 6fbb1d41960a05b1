import type { JournalRecord } from '@runplan/journal';
import { readEvent, taskCountOf } from '../events/read.js';
import { clockOf } from './table.js';

// One line for people per journal event (stderr when it is not a terminal).

// One line for one event (stderr when it is not a terminal).
export function describe(r: JournalRecord): string {
  const d = r.data;
  const time = r.ts.slice(11, 19);
  const task = typeof d.taskId === 'string' ? ` ${d.taskId}` : '';
  const attempt = typeof d.attempt === 'number' ? ` #${d.attempt}` : '';
  return `runplan: ${time} ${r.type}${task}${attempt}${detailOf(r)}`;
}

// What one line says after the event's name (nothing for most events).
export function detailOf(r: JournalRecord): string {
  const e = readEvent(r);
  switch (e?.type) {
    case 'run-started':
      return ` ${String(e.data.slug)}: ${taskCountOf(e.data)} task(s), run ${String(e.data.logicalRunId)}`;
    case 'command-settled':
      // A command torn down after its terminal line (result_grace) was not killed for failing.
      return `: ${String(e.data.reason)} exit=${String(e.data.exitCode)} ${String(e.data.durationMs)}ms${e.data.lingered === true ? ' (stayed alive after its result line: torn down, result_grace)' : ''}`;
    case 'gates-done':
      return `: ${e.data.passed === false ? 'failed' : 'ok'}`;
    case 'pre-run-done':
    case 'post-run-done':
      return `: ${e.data.ok === false ? 'failed' : 'ok'}`;
    case 'integrated':
      return `: ${String(e.data.mode)} → ${String(e.data.resultCommit).slice(0, 12)}`;
    case 'checkpoint':
      return `: ${String(e.data.resultCommit).slice(0, 12)}`;
    case 'branch-updated':
    case 'landing-started':
    case 'landed':
      return `: ${String(e.data.branch)} → ${String(e.data.to).slice(0, 12)}`;
    case 'attempt-closed':
      return `: ${String(e.data.outcome)}${e.data.outcome === 'success' ? '' : ` (${String(e.data.class)}, ${String(e.data.reason)})`}`;
    case 'run-failed':
      return `: ${String(e.data.class)} (${String(e.data.reason)})`;
    case 'provider-wait': {
      const left = Date.parse(String(e.data.until)) - Date.parse(r.ts);
      const clock = clockOf(String(e.data.until), Date.parse(r.ts));
      return `: ${String(e.data.reason)}, waiting for provider until ${clock}${Number.isFinite(left) ? ` (in ${inWords(left)})` : ''}`;
    }
    case 'attempt-renumbered': {
      const skipped = Array.isArray(e.data.skipped) ? e.data.skipped : [];
      return `: passed over ${skipped.map((x) => `#${String(x.attempt)} (${String(x.found)} exists)`).join(', ')}`;
    }
    case 'job-submitted':
      return `: slurm job ${String(e.data.jobId)} (${String(e.data.phase)})`;
    case 'job-ended':
      return `: slurm job ${String(e.data.jobId)} ${String(e.data.state)}${e.data.exitCode !== null ? ` exit=${String(e.data.exitCode)}` : ''}${e.data.nodes ? ` on ${String(e.data.nodes)}` : ''}`;
    case 'jobs-cancelled': {
      const { cancelled, survivors } = e.data;
      const still = survivors.length > 0 ? `; still queued: ${survivors.join(' ')}` : '';
      return `: cancelled ${cancelled.length} Slurm job(s) left by an earlier coordinator${cancelled.length > 0 ? `: ${cancelled.join(' ')}` : ''}${still}`;
    }
    case 'worktrees-removed':
      return `: ${Array.isArray(e.data.worktrees) ? e.data.worktrees.length : 0} earlier worktree(s)`;
    case 'round-restored':
      return `: ${String(e.data.message)}`;
    case 'ref-failed':
      return `: could not ${String(e.data.op)} ${String(e.data.ref)}: ${String(e.data.message)}`;
    case 'journal-failed':
      return `: the previous coordinator exited 5 (${String(e.data.errno ?? e.data.reason ?? 'journal write failed')} at ${String(e.data.path)})`;
    default:
      return '';
  }
}

// A wait in words people read at a glance: `2h13m`, `4m05s`, `12s`, `300ms`.
function inWords(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}
