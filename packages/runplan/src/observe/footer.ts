import { formatCost, formatTokens } from './amounts.js';
import { rankOf, type Row } from './table.js';

// The live table's footer: how many tasks stand where, the spend against the budget, and
// the run's first failure with where its evidence is.

/** The run's first attempt that closed without success (an interrupted one is not a failure). */
export interface FirstFailure {
  task: string;
  attempt: number;
  reason: string;
  evidenceDir: string;
}

export interface FooterInput {
  rows: Row[];
  /** The slug's spend so far (what the budget is held against: carried from earlier runs, plus this one's). */
  tokens: number;
  costUsd: number;
  budget?: { maxTokens?: number; maxCostUsd?: number };
  failure?: FirstFailure;
}

// One line of totals (and spend), then the first failure when there is one.
export function footer(o: FooterInput): string[] {
  const count = [0, 0, 0, 0];
  let interrupted = 0;
  for (const r of o.rows) {
    if (r.interrupted === true) interrupted += 1;
    else count[rankOf(r)]! += 1;
  }
  const [running, failed, queued, done] = count;
  // Tasks the run's interruption stopped are neither failed nor at work: named only when there are some.
  const parts = [
    `${done} done`,
    `${running} running`,
    `${failed} failed`,
    ...(interrupted > 0 ? [`${interrupted} interrupted`] : []),
    `${queued} queued`,
  ];
  const { maxTokens, maxCostUsd } = o.budget ?? {};
  if (o.tokens > 0 || maxTokens !== undefined)
    parts.push(`${formatTokens(o.tokens)}${maxTokens !== undefined ? ` of ${formatTokens(maxTokens)}` : ''} tokens`);
  if (o.costUsd > 0 || maxCostUsd !== undefined)
    parts.push(`${formatCost(o.costUsd)}${maxCostUsd !== undefined ? ` of ${formatCost(maxCostUsd)}` : ''}`);
  const left = [
    maxTokens !== undefined ? `${formatTokens(Math.max(0, maxTokens - o.tokens))} tokens` : '',
    maxCostUsd !== undefined ? formatCost(Math.max(0, maxCostUsd - o.costUsd)) : '',
  ].filter((x) => x !== '');
  if (left.length > 0) parts.push(`budget left ${left.join(', ')}`);
  const lines = [parts.join(' · ')];
  const f = o.failure;
  if (f !== undefined) lines.push(`first failure: ${f.task} #${f.attempt} ${f.reason} · ${f.evidenceDir}`);
  return lines;
}
