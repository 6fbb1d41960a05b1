import { join } from 'node:path';
import type { RunRounds } from '../attempt/round-refs.js';
import type { RunJournal } from '../events/sink.js';
import { type Integration, Serial, type RunContext } from './context.js';
import type { CoordinatorInit } from './coordinator-init.js';
import type { RunLedger } from './ledger.js';
import type { RunParts } from './parts.js';
import { taskList } from './task-list.js';

/** What a coordinator holds that its run's parts are wired from. */
export interface WireSource {
  init: CoordinatorInit;
  started: Date;
  abort: AbortController;
  journal: RunJournal;
  integration: Integration;
  ledger: RunLedger;
  rounds: RunRounds;
}

// The run's parts, built once: what attempts see (RunContext) over the ledger's maps.
export function wireRun(c: WireSource, gitIdentity: Record<string, string>, registeredTrees: ReadonlySet<string>): RunParts {
  const { plan, run, slug, repo, planDigest, contracts, secrets, req } = c.init;
  const ctx: RunContext = {
    plan,
    runId: run.runId,
    startedAt: c.started,
    run,
    slug,
    repo,
    planDigest,
    contractDigests: contracts,
    secrets,
    gitIdentity,
    signal: c.abort.signal,
    emit: c.journal.emit,
    diskFailed: c.journal.diskFailed,
    integration: c.integration,
    checkpoints: c.ledger.checkpoints,
    workdirTemplate: plan.workdir ?? join(slug.work, '{{run.id}}.{{task.id}}.{{run.attempt}}'),
    durableRounds: c.ledger.durableRounds,
    roundKept: (ref) => c.rounds.kept(ref),
    worktrees: new Serial(),
    spent: () => ({ usage: c.ledger.usage, costUsd: c.ledger.costUsd }),
    threadTotals: c.ledger.threadTotals,
    liveUsage: (u) => {
      try {
        req.onLiveUsage?.(u);
      } catch {
        // Observers never change outcomes.
      }
    },
  };
  const jobs = Math.max(1, req.jobs ?? plan.jobs);
  return { ctx, ledger: c.ledger, journal: c.journal, jobs, tasks: taskList(plan, contracts), registeredTrees };
}
