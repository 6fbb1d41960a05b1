import type { ExecutorHooks } from '../executor/index.js';
import type { Attempt } from './record.js';

// What an executor reports about the attempt's jobs, journaled: `job-submitted` once the
// engine named the job, `job-ended` with its record (local commands report neither).
export function jobEvents(a: Attempt, phase: 'command' | 'gates'): ExecutorHooks {
  const { ctx, task } = a;
  return {
    onSubmitted: async (job) => {
      await ctx.emit('job-submitted', { taskId: task.id, attempt: a.attempt, phase, jobId: job.jobId, name: job.name });
    },
    onEnded: async (job) => {
      await ctx.emit('job-ended', { taskId: task.id, attempt: a.attempt, ...job });
    },
  };
}
