import { budgetCell } from './slug-budget.js';
import type { SlugStatus } from './status.js';
import { clockOf } from './table.js';
import { alignColumns } from './columns.js';

// The human table of `runplan status` (what --json prints as objects).

// The human rows of `runplan status` (a table with a header).
export function statusTable(rows: SlugStatus[]): string[] {
  const header = ['SLUG', 'RUN', 'RUNS', 'STATE', 'TASKS', 'ATTEMPTS', 'CURRENT', 'ELAPSED', 'TOKENS', 'COST', 'BUDGET', 'DISK'];
  const body = rows.map((r) => [
    r.slug,
    r.runId ?? '-',
    `×${r.runs}`,
    stateCell(r),
    `${r.tasksDone}/${r.tasksTotal}`,
    String(r.attempts),
    r.current.length > 0 ? r.current.join(',') : '-',
    `${Math.round(r.elapsedMs / 1000)}s`,
    String(r.usage.inputTokens + r.usage.outputTokens + r.usage.cacheReadTokens + r.usage.cacheCreationTokens),
    `$${r.costUsd.toFixed(2)}`,
    budgetCell(r.slugSpend),
    humanBytes(r.diskBytes),
  ]);
  return alignColumns([header, ...body]);
}

// The STATE cell: `failed (class)`, or a state with the count of leftovers still alive.
function stateCell(r: SlugStatus): string {
  if (r.state === 'failed') return `failed (${r.failedClass ?? '?'})`;
  if (r.leftovers.length > 0) return `${r.state} (${r.leftovers.length} leftover${r.leftovers.length === 1 ? '' : 's'})`;
  const wait = r.providerWaits[0];
  const more = r.providerWaits.length > 1 ? `, +${r.providerWaits.length - 1} more` : '';
  if (wait !== undefined) return `${r.state} (${wait.taskId} waiting for provider until ${clockOf(wait.until)}${more})`;
  return r.state;
}

function humanBytes(n: number): string {
  if (n < 1024) return `${n}B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)}K`;
  if (n < 1 << 30) return `${(n / (1 << 20)).toFixed(1)}M`;
  return `${(n / (1 << 30)).toFixed(1)}G`;
}
