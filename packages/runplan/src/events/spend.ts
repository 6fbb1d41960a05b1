import type { RunStartedData } from './run-events.js';
import { addUsage, type UsageTotals, ZERO_USAGE } from './usage.js';

/**
 * A run's spend as its journal tells it: from what run-started carried on from the runs a
 * continuation continues, plus what each usage and command-settled record adds. Spend
 * journaled before run-started (none, in journals runplan writes) is added again on top
 * of what it carries once it arrives.
 */
export class RunSpend {
  usage: UsageTotals = ZERO_USAGE;
  costUsd = 0;
  /** Spend journaled before run-started, added again on top of what it carries; undefined once it came. */
  private early: Array<{ usage: unknown; costUsd: unknown }> | undefined = [];

  // run-started: start from what it carried, then add again what was journaled before it.
  carry(started: RunStartedData): void {
    this.usage = addUsage(ZERO_USAGE, { ...ZERO_USAGE, ...(started.usageCarried ?? {}) });
    this.costUsd = started.costCarried ?? 0;
    const early = this.early ?? [];
    this.early = undefined;
    for (const s of early) this.add(s.usage, s.costUsd);
  }

  // Adds what one record says was spent (before run-started: also kept to add on top of what it carries).
  add(usage: unknown, costUsd: unknown): void {
    this.early?.push({ usage, costUsd });
    if (usage !== null && typeof usage === 'object') this.usage = addUsage(this.usage, { ...ZERO_USAGE, ...(usage as UsageTotals) });
    if (typeof costUsd === 'number') this.costUsd += costUsd;
  }
}
