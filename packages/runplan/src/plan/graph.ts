// Dependency-graph questions over task ids, in file order so answers are stable.

export interface GraphNode {
  id: string;
  needs: readonly string[];
}

// Every cycle among known ids, each once, as `a → b → a` paths starting at the cycle's
// first task in file order.
export function findCycles(nodes: readonly GraphNode[]): string[][] {
  const byId = new Map<string, GraphNode>();
  for (const node of nodes) byId.set(node.id, node);
  // File positions, needed only to name a cycle found.
  let positions: Map<string, number> | undefined;
  const position = (id: string): number => (positions ??= new Map(nodes.map((n, i) => [n.id, i] as const))).get(id)!;
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const seen = new Set<string>();
  const cycles: string[][] = [];

  // Depth first with a stack of its own (each frame: a task and the index of its next need):
  // recursion overflowed the call stack on a chain of ~5 000 tasks (internal_error, exit 1).
  const frames: Array<{ id: string; next: number }> = [];
  const enter = (id: string): void => {
    state.set(id, 'visiting');
    stack.push(id);
    frames.push({ id, next: 0 });
  };
  const visit = (root: string): void => {
    enter(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const needs = byId.get(frame.id)?.needs ?? [];
      if (frame.next >= needs.length) {
        frames.pop();
        stack.pop();
        state.set(frame.id, 'done');
        continue;
      }
      const need = needs[frame.next++]!;
      if (!byId.has(need)) continue;
      const s = state.get(need);
      if (s === 'visiting') {
        const cycle = stack.slice(stack.indexOf(need));
        const first = cycle.reduce((a, b) => (position(a) <= position(b) ? a : b));
        const rotated = [...cycle.slice(cycle.indexOf(first)), ...cycle.slice(0, cycle.indexOf(first))];
        const key = rotated.join('\0');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...rotated, first]);
        }
      } else if (s === undefined) enter(need);
    }
  };
  for (const node of nodes) if (!state.has(node.id)) visit(node.id);
  return cycles;
}

// Kahn's order, always taking the earliest task in file order whose needs are done.
// Tasks caught in a cycle (never valid in a loaded plan) are left out. The ready tasks
// wait in a min-heap of file positions, so a plan of n tasks and e needs costs
// O((n + e) log n), not a rescan of the task list per task taken (O(n²)).
export function dependencyOrder(nodes: readonly GraphNode[]): string[] {
  const known = new Set(nodes.map((n) => n.id));
  // Per node: how many distinct known needs are not done yet; per id: the nodes that wait on it.
  const pending = new Array<number>(nodes.length);
  const waiters = new Map<string, number[]>();
  const ready = new MinHeap();
  nodes.forEach((node, i) => {
    const needs = new Set(node.needs.filter((need) => known.has(need)));
    pending[i] = needs.size;
    for (const need of needs) {
      const list = waiters.get(need);
      if (list === undefined) waiters.set(need, [i]);
      else list.push(i);
    }
    if (needs.size === 0) ready.push(i);
  });
  const done = new Set<string>();
  const order: string[] = [];
  while (ready.size > 0) {
    const node = nodes[ready.pop()]!;
    // A second task with an id already done is never taken (ids are unique in a loaded plan).
    if (done.has(node.id)) continue;
    done.add(node.id);
    order.push(node.id);
    for (const i of waiters.get(node.id) ?? []) if (--pending[i]! === 0) ready.push(i);
  }
  return order;
}

// A binary min-heap of non-negative integers.
class MinHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  push(value: number): void {
    const a = this.items;
    let i = a.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]! <= value) break;
      a[i] = a[parent]!;
      i = parent;
    }
    a[i] = value;
  }

  pop(): number {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1]! < a[l]! ? l + 1 : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
