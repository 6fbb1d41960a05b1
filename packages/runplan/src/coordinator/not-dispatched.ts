import type { TaskSpec } from '../plan/types.js';
import type { NotDispatchedTask } from '../events/types.js';

// Under keep-going: each waiting task downstream of a task that stopped for good (`failed`,
// in the order they stopped), with the first of those it needs, directly or through others.
export function notDispatched(
  tasks: readonly Pick<TaskSpec, 'id' | 'needs'>[],
  waiting: readonly string[],
  failed: readonly string[],
): NotDispatchedTask[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const upstream = (id: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [...(byId.get(id)?.needs ?? [])];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      stack.push(...(byId.get(n)?.needs ?? []));
    }
    return seen;
  };
  const out: NotDispatchedTask[] = [];
  for (const task of tasks) {
    if (!waiting.includes(task.id)) continue;
    const needs = upstream(task.id);
    const because = failed.find((f) => needs.has(f));
    if (because !== undefined) out.push({ task: task.id, because });
  }
  return out;
}
