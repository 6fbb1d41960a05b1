// Dependency-graph questions over task ids, in file order so answers are stable.

export interface GraphNode {
  id: string;
  needs: readonly string[];
}

// Every cycle among known ids, each once, as `a → b → a` paths starting at the cycle's
// first task in file order.
export function findCycles(nodes: readonly GraphNode[]): string[][] {
  const byId = new Map(nodes.map((n) => [n.id, n] as const));
  const order = new Map(nodes.map((n, i) => [n.id, i] as const));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const seen = new Set<string>();
  const cycles: string[][] = [];

  const visit = (id: string): void => {
    state.set(id, 'visiting');
    stack.push(id);
    for (const need of byId.get(id)?.needs ?? []) {
      if (!byId.has(need)) continue;
      const s = state.get(need);
      if (s === 'visiting') {
        const cycle = stack.slice(stack.indexOf(need));
        const first = cycle.reduce((a, b) => (order.get(a)! <= order.get(b)! ? a : b));
        const rotated = [...cycle.slice(cycle.indexOf(first)), ...cycle.slice(0, cycle.indexOf(first))];
        const key = rotated.join('\0');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...rotated, first]);
        }
      } else if (s === undefined) visit(need);
    }
    stack.pop();
    state.set(id, 'done');
  };
  for (const node of nodes) if (!state.has(node.id)) visit(node.id);
  return cycles;
}

// Kahn's order, always taking the earliest task in file order whose needs are done.
// Tasks caught in a cycle (never valid in a loaded plan) are left out.
export function dependencyOrder(nodes: readonly GraphNode[]): string[] {
  const done = new Set<string>();
  const known = new Set(nodes.map((n) => n.id));
  const order: string[] = [];
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (const node of nodes) {
      if (done.has(node.id)) continue;
      if (node.needs.every((need) => done.has(need) || !known.has(need))) {
        done.add(node.id);
        order.push(node.id);
        progressed = true;
        break;
      }
    }
  }
  return order;
}
