import type { JournalWriter } from '@runplan/journal';
import type { Plan } from '../plan/types.js';
import type { RunPaths, SlugPaths } from '../host/state.js';
import type { RunRequest } from './types.js';

/** What one run's coordinator is built from, once its journal is open. */
export interface CoordinatorInit {
  plan: Plan;
  repo: string;
  slug: SlugPaths;
  run: RunPaths;
  /** Where the integration branch starts: the plan's base, or the resumed run's own. */
  baseCommit: string;
  writer: JournalWriter;
  secrets: string[];
  planDigest: string;
  contracts: Map<string, string>;
  req: RunRequest;
}
