import { taskListDigest } from '../plan/digest.js';
import type { Plan } from '../plan/types.js';

// The task list as run-started and plan-amended journal it: its length and one digest of
// every task's id, needs and contract digest (taskListDigest), so the record stays small
// however many tasks the plan has (the tasks themselves are in the plan copy).
export function taskList(plan: Plan, contracts: Map<string, string>): { taskCount: number; tasksDigest: string } {
  return { taskCount: plan.tasks.length, tasksDigest: taskListDigest(plan, contracts) };
}
