import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dependencyOrder, type GraphNode } from '../src/plan/graph.js';

// The definition dependencyOrder must keep: rescan the list from the top after each task
// taken, taking the first task (file order) whose known needs are all done.
function byDefinition(nodes: readonly GraphNode[]): string[] {
  const done = new Set<string>();
  const known = new Set(nodes.map((n) => n.id));
  const order: string[] = [];
  for (let progressed = true; progressed; ) {
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

// A small deterministic generator, so a failure names its seed.
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

test('dependencyOrder matches its definition on random graphs (cycles, unknown and repeated needs, repeated ids)', () => {
  for (let seed = 1; seed <= 400; seed++) {
    const r = rng(seed);
    const n = 1 + Math.floor(r() * 14);
    const ids = Array.from({ length: n }, (_, i) => `t${r() < 0.08 ? Math.floor(r() * n) : i}`);
    const nodes = ids.map((id) => ({
      id,
      needs: Array.from({ length: Math.floor(r() * 4) }, () => (r() < 0.1 ? 'ghost' : `t${Math.floor(r() * n)}`)),
    }));
    assert.equal(dependencyOrder(nodes), byDefinition(nodes), `seed ${seed}: ${JSON.stringify(nodes)}`);
  }
});

test('dependencyOrder: file order among ready tasks, cycles left out', () => {
  const nodes = [
    { id: 'e', needs: ['d'] },
    { id: 'a', needs: [] },
    { id: 'd', needs: ['a', 'b', 'a'] },
    { id: 'b', needs: [] },
    { id: 'c', needs: ['a', 'elsewhere'] },
    { id: 'x', needs: ['y'] },
    { id: 'y', needs: ['x'] },
    { id: 'z', needs: ['z'] },
  ];
  assert.equal(dependencyOrder(nodes), ['a', 'b', 'd', 'e', 'c']);
});

test('dependencyOrder over a 20 000-task chain written backwards', () => {
  const n = 20_000;
  const nodes = Array.from({ length: n }, (_, i) => ({ id: `t${n - 1 - i}`, needs: i === n - 1 ? [] : [`t${n - 2 - i}`] }));
  const order = dependencyOrder(nodes);
  assert.is(order.length, n);
  assert.is(order[0], 't0');
  assert.is(order[n - 1], `t${n - 1}`);
});

test.run();
