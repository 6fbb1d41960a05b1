// Test-only environment fail points (the crash sweep of issue 7 and the exit-5 path):
// RUNPLAN_FAILPOINT=kill-after:<event-type>[:<task>] SIGKILLs the coordinator once that
// event (of that task) is durable; RUNPLAN_FAILPOINT=journal-error:<event-type>[:<task>]
// makes that append fail as a full disk would. `kill-after:journal-header` is the moment the
// new run's journal holds only its header, just before run-started.
export interface FailPoint {
  kind: 'kill-after' | 'journal-error';
  type: string;
  task: string | undefined;
}

export function failPoint(): FailPoint | undefined {
  const m = /^(kill-after|journal-error):([a-z-]+)(?::([A-Za-z0-9._-]+))?$/.exec(process.env.RUNPLAN_FAILPOINT ?? '');
  return m ? { kind: m[1] as FailPoint['kind'], type: m[2]!, task: m[3] } : undefined;
}

export function hits(fp: FailPoint | undefined, kind: FailPoint['kind'], type: string, data: unknown): boolean {
  if (fp === undefined || fp.kind !== kind || fp.type !== type) return false;
  return fp.task === undefined || (data as { taskId?: unknown }).taskId === fp.task;
}
