import type { JournalRecord } from '@runplan/journal';
import { readEvent, taskCountOf } from '../events/read.js';

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
      return `: ${String(e.data.reason)} exit=${String(e.data.exitCode)} ${String(e.data.durationMs)}ms`;
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
    case 'attempt-renumbered': {
      const skipped = Array.isArray(e.data.skipped) ? e.data.skipped : [];
      return `: passed over ${skipped.map((x) => `#${String(x.attempt)} (${String(x.found)} exists)`).join(', ')}`;
    }
    case 'worktrees-removed':
      return `: ${Array.isArray(e.data.worktrees) ? e.data.worktrees.length : 0} earlier worktree(s)`;
    case 'journal-failed':
      return `: the previous coordinator exited 5 (${String(e.data.errno ?? e.data.reason ?? 'journal write failed')} at ${String(e.data.path)})`;
    default:
      return '';
  }
}
