import type { JournalRecord } from '@runplan/journal';
import type { EventMap, EventType, RunStartedData, TaskDigest } from './types.js';

/**
 * Reading journal records back as the events EventMap says the coordinator wrote: the one
 * place a record's `data` is cast. The journal itself checked each line's checksum and
 * chain; what is trusted here is that runplan wrote it. Fields journals written by older
 * runplan versions lack (run-started `taskCount`, attempt-started `worktree` and
 * `contractDigest`) are still checked where they are read.
 */
export type RunEvent = { [K in EventType]: Omit<JournalRecord, 'type' | 'data'> & { type: K; data: EventMap[K] } }[EventType];

/** Every event type, so a record of another type (the header, journal-repaired) is told apart. */
const EVENT_TYPES: Record<EventType, true> = {
  'run-started': true,
  'coordinator-crashed': true,
  'leftovers-ended': true,
  'journal-failed': true,
  'plan-amended': true,
  'checkpoint-adopted': true,
  'repair-decided': true,
  'provider-wait': true,
  'round-done': true,
  'round-restored': true,
  'ref-failed': true,
  usage: true,
  'operator-retry': true,
  'attempt-renumbered': true,
  'attempt-started': true,
  'worktrees-removed': true,
  'pre-run-done': true,
  'job-submitted': true,
  'job-ended': true,
  'jobs-cancelled': true,
  'command-settled': true,
  'gates-done': true,
  'post-run-done': true,
  integrated: true,
  checkpoint: true,
  'branch-updated': true,
  'attempt-closed': true,
  'landing-started': true,
  landed: true,
  'run-complete': true,
  'run-failed': true,
};

// The record as its typed event; undefined for records runplan's events do not include
// (the journal's own header and journal-repaired).
export function readEvent(r: JournalRecord): RunEvent | undefined {
  return Object.hasOwn(EVENT_TYPES, r.type) ? (r as unknown as RunEvent) : undefined;
}

// The task list run-started carried in journals written before `taskCount` (undefined in newer ones).
export function legacyTasks(started: RunStartedData): TaskDigest[] | undefined {
  const tasks = (started as { tasks?: unknown }).tasks;
  return Array.isArray(tasks) ? (tasks as TaskDigest[]) : undefined;
}

// How many tasks a run-started says the plan has.
export function taskCountOf(started: RunStartedData): number {
  return typeof started.taskCount === 'number' ? started.taskCount : (legacyTasks(started)?.length ?? 0);
}
