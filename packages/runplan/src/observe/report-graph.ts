// The report's task graph: one box per task coloured by its state, an edge per need, tasks
// in columns by their depth in the graph (the longest chain of needs before them). Part of
// the page's script (report-html.ts), which supplies `D`, `el` and `svg`.

/** Tasks up to which the graph is drawn; a larger plan gets a note instead (the task table pages through them). */
export const GRAPH_LIMIT = 400;

export const GRAPH_SCRIPT = `
function graph() {
  const host = document.getElementById('graph');
  if (D.tasks.length > ${GRAPH_LIMIT}) {
    host.append(el('p', { id: 'graph-skipped' }, 'The task graph is drawn for plans of up to ${GRAPH_LIMIT} tasks; this one has ' + D.tasks.length + ': the task table lists each with its needs and state.'));
    return;
  }
  const byId = new Map(D.tasks.map((t) => [t.id, t]));
  const depth = new Map();
  const depthOf = (id, path) => {
    if (depth.has(id)) return depth.get(id);
    if (path.has(id)) return 0;
    path.add(id);
    let d = 0;
    for (const n of (byId.get(id) || { needs: [] }).needs) if (byId.has(n)) d = Math.max(d, depthOf(n, path) + 1);
    path.delete(id);
    depth.set(id, d);
    return d;
  };
  const columns = [];
  const at = new Map();
  for (const t of D.tasks) {
    const d = depthOf(t.id, new Set());
    columns[d] = columns[d] || [];
    at.set(t.id, { x: 10 + d * 160, y: 10 + columns[d].length * 28 });
    columns[d].push(t.id);
  }
  const tallest = Math.max(1, ...columns.map((c) => (c ? c.length : 0)));
  const s = svg('svg', { width: 20 + columns.length * 160, height: 20 + tallest * 28, id: 'graph-svg' });
  for (const t of D.tasks) {
    const to = at.get(t.id);
    for (const n of t.needs) {
      const from = at.get(n);
      if (from === undefined) continue;
      s.append(svg('line', { x1: from.x + 130, y1: from.y + 10, x2: to.x, y2: to.y + 10, class: 'graph-edge', 'data-from': n, 'data-to': t.id }));
    }
  }
  for (const t of D.tasks) {
    const p = at.get(t.id);
    const g = svg('g', { class: 'graph-node', 'data-task': t.id, 'data-state': t.state });
    const title = svg('title', {}); title.textContent = t.id + ': ' + t.state + (t.needs.length ? ' (needs ' + t.needs.join(', ') + ')' : ''); g.append(title);
    const known = ['done', 'adopted', 'failed', 'running', 'waiting', 'interrupted', 'not_dispatched'].includes(t.state);
    g.append(svg('rect', { x: p.x, y: p.y, width: 130, height: 20, rx: 3, class: 'gn-' + (known ? t.state : 'failed') }));
    const label = svg('text', { x: p.x + 6, y: p.y + 14, class: 'graph-label' });
    label.textContent = t.id.length > 18 ? t.id.slice(0, 17) + '…' : t.id;
    g.append(label);
    s.append(g);
  }
  host.append(s);
}
`;
