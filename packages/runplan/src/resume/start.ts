import type { ScanResult } from '@runplan/journal';
import type { RunEnd, RunRequest } from '../coordinator/types.js';
import type { CheckpointData, UsageTotals } from '../events/types.js';
import type { RunPaths, SlugPaths } from '../host/state.js';
import type { Plan } from '../plan/types.js';
import type { PriorRun } from './inspect.js';
import type { RecoveredRun } from './recover.js';
import type { SlugSpend } from './slug-spend.js';

// What chooseRun (choose.ts) decides from and what it decides: the shapes its parts share.

/** How `run` starts relative to the slug's earlier runs. */
export type StartMode =
  | { mode: 'clean'; run: RunPaths; startOrder: number; abandoned: string[] }
  | {
      mode: 'resume';
      run: RunPaths;
      recovered: RecoveredRun;
      scanned: ScanResult | undefined;
      /** A continuation that died before it had adopted every checkpoint: the ones it still owes (in `recovered.checkpoints` already), journaled by the resume. */
      adopting?: { origin: string; checkpoints: CheckpointData[] };
    }
  | { mode: 'continue'; run: RunPaths; startOrder: number; origin: string; recovered: RecoveredRun; abandoned: string[] };

/**
 * What `run` does with the slug's earlier runs. `attemptFloor`: the highest attempt number
 * of each task in the slug's whole history, so the Nth attempt of a task is attempt N and
 * `{{run.attempt}}` never repeats for a task, across resumes, continuations and `--fresh`.
 */
export type Start = StartMode & {
  attemptFloor: Map<string, number>;
  /** The slug's spend a new run or continuation carries (zero with --reset-budget); a resume keeps its own. */
  carried: SlugSpend;
  /** The last running total of each agent thread in the slug's runs (even after --reset-budget: that spend was counted). */
  threadTotals: Map<string, UsageTotals>;
};

/** What chooseRun decides from. `digests`: the plan's task contract digests, when the caller has them already. */
export interface ChooseInput {
  slug: SlugPaths;
  plan: Plan;
  repo: string;
  req: RunRequest;
  /** The id a new run (clean or continuation) takes. */
  runId: string;
  /** What the plan's base resolves to now: a complete run on it with the same contracts is up to date. */
  baseCommit: string;
  digests?: Map<string, string>;
  /**
   * `run --dry-run`: decide without writing. Runs `--fresh` would abandon and never-started
   * runs that would be closed are named in `abandoned`, not closed; nothing is torn down.
   */
  readOnly?: boolean;
}

/** What decideRun decides from: the slug's runs without never-started ones, which are named only for `--run`. */
export interface DecideInput extends Required<Omit<ChooseInput, 'readOnly'>> {
  readOnly: boolean;
  prior: PriorRun[];
  never: PriorRun[];
  /** The new run's place in the slug's history. */
  startOrder: number;
  /** What a new run or continuation would carry: the slug's spend (zero with --reset-budget). */
  carried: SlugSpend;
}

/** A start decided (with lines for people, when it has any), or the end a refusal or an up-to-date run makes. */
export type Decided = { ok: true; value: StartMode; notices?: string[] } | { ok: false; end: RunEnd };

/**
 * The chosen start, and one line for people per never-started run closed on the way (also
 * when the run ends there up to date: `abandoned` names them, for the dry run).
 */
export type Chosen = { ok: true; value: Start; notices: string[] } | { ok: false; end: RunEnd; notices: string[]; abandoned?: string[] };
