import type { RunJournal } from '../events/sink.js';
import type { RunContext } from './context.js';
import type { RunLedger } from './ledger.js';

/** The pieces of one run the coordinator wires once and hands to each step. */
export interface RunParts {
  /** What attempts see: the plan, paths, emit, the integration lock, the ledger's maps. */
  ctx: RunContext;
  ledger: RunLedger;
  journal: RunJournal;
  /** How many attempts run at once (`--jobs`, else the plan's). */
  jobs: number;
  /** The task list as run-started and plan-amended journal it (see taskList). */
  tasks: { taskCount: number; tasksDigest: string };
  /** Worktrees git has registered, read at a resume or continuation (attempt numbers never reuse one). */
  registeredTrees: ReadonlySet<string>;
}
