import { randomBytes } from 'node:crypto';
import { GRAPH_SCRIPT } from './report-graph.js';
import type { ReportData } from './report-data.js';

// `runplan report` as one self-contained HTML file: inline CSS, inline script, SVG drawn by
// it; no network, no external asset. The data is embedded once as JSON, escaped so agent
// text cannot end the script element; the page puts every string in as a text node; a CSP
// allows only this page's own script and style (by nonce).

/** Tasks (and their timeline lanes) per page: plans of thousands of tasks stay usable. */
export const PAGE_SIZE = 200;

/** The characters embedJson escapes. */
const UNSAFE_IN_SCRIPT = ['<', '>', '&', '\u2028', '\u2029'];

// JSON safe inside <script>: no `<`, `>`, `&`, U+2028, U+2029 left as themselves. Most
// reports hold none of them: a search for each (~1 ms over 8 MB) skips the regex pass (~15 ms).
export function embedJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (!UNSAFE_IN_SCRIPT.some((c) => json.includes(c))) return json;
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d232a;background:#fff}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:24px 0 8px}
.outcome-complete{color:#17803d}.outcome-failed{color:#b42318}.outcome-incomplete{color:#a15c07}.outcome-corrupt{color:#b42318}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}dt{color:#5b6570}dd{margin:0}
table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #e3e6ea;text-align:left;white-space:nowrap}
code,pre{font:12px ui-monospace,monospace}pre{white-space:pre-wrap;background:#f5f6f8;padding:6px;margin:4px 0;max-width:100ch}
.st-done{color:#17803d}.st-failed{color:#b42318}.st-adopted{color:#2563eb}.st-running{color:#a15c07}
.ph-pre_run{fill:#94a3b8}.ph-command{fill:#3b82f6}.ph-gates{fill:#8b5cf6}.ph-post_run{fill:#14b8a6}.ph-integrate{fill:#f59e0b}.ph-checkpoint{fill:#22c55e}
.ph-open{fill:#cbd5e1}.failed-bar{stroke:#b42318;stroke-width:2}.interrupted-bar{stroke:#a15c07;stroke-width:2;stroke-dasharray:3 2}.st-interrupted{color:#a15c07}.wait{fill:#fde68a}.tick{stroke:#111;stroke-width:1}
.mark-crash{stroke:#b42318;stroke-dasharray:4 2}.mark-adopted{stroke:#2563eb;stroke-dasharray:2 2}.mark-journal{stroke:#a15c07}
.gn-done{fill:#dcfce7;stroke:#17803d}.gn-adopted{fill:#dbeafe;stroke:#2563eb}.gn-failed{fill:#fee2e2;stroke:#b42318}.gn-running{fill:#fef3c7;stroke:#a15c07}.gn-interrupted{fill:#fff;stroke:#a15c07;stroke-dasharray:3 2}.gn-not_dispatched{fill:#fff;stroke:#94a3b8;stroke-dasharray:2 2}.st-not_dispatched{color:#5b6570}.gn-waiting{fill:#f1f5f9;stroke:#94a3b8}
.graph-edge{stroke:#94a3b8;stroke-width:1}#graph{overflow:auto;max-height:520px;max-width:100%}.graph-label{font:11px ui-monospace,monospace;fill:#1d232a}.mark-continued{stroke:#17803d;stroke-dasharray:8 3}.earlier-run{opacity:.6}
.lane-label{font:11px ui-monospace,monospace;fill:#334155}.axis{stroke:#cbd5e1}.curve{fill:none;stroke:#3b82f6;stroke-width:2}.budget{stroke:#b42318;stroke-dasharray:6 3}
.legend span{display:inline-block;margin-right:12px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
button{margin:0 4px}
`;

// The page's script: builds every element from the embedded data, text as text nodes only.
const SCRIPT = `
'use strict';
const D = JSON.parse(document.getElementById('report-data').textContent);
const PAGE = ${PAGE_SIZE};
const NS = 'http://www.w3.org/2000/svg';
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function svg(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, String(attrs[k]));
  return e;
}
const secs = (ms) => (ms / 1000).toFixed(1) + 's';
const usd = (n) => '$' + n.toFixed(4);
function row(dl, k, v, id) { dl.append(el('dt', {}, k)); const dd = el('dd', id ? { id } : {}, v); dl.append(dd); return dd; }
function header() {
  const root = document.getElementById('receipt');
  const h = el('h1', { class: 'outcome-' + D.outcome, id: 'outcome' }, 'runplan ' + D.slug + ': ' + D.outcome + (D.class ? ' (' + D.class + ', ' + D.reason + ')' : ''));
  root.append(h);
  const dl = el('dl');
  row(dl, 'exit code', D.exitCode === null ? (D.outcome === 'corrupt' ? 'none (its journal is corrupt)' : 'none yet (incomplete)') : D.exitCode);
  row(dl, 'run', D.runId + (D.continues ? ' (continues ' + D.continues + ')' : ''));
  if (D.runs.length > 1) row(dl, 'runs', D.runs.map((r) => r.runId + ' ' + r.outcome).join(' → ') + ' (×' + D.runs.length + ')', 'runs');
  row(dl, 'coordinator crashes and resumes', D.crashes);
  row(dl, 'base → result', D.base + ' ' + D.baseCommit.slice(0, 12) + ' → ' + (D.result ? D.result.slice(0, 12) : '-') + (D.landed ? ' (landed ' + D.landed + ')' : ''));
  row(dl, 'tasks', '', 'total-tasks').textContent = D.tasksDone + '/' + D.tasksTotal;
  row(dl, 'attempts', D.attemptsTotal, 'total-attempts');
  row(dl, 'tokens', D.tokens + (D.budget.maxTokens ? ' of ' + D.budget.maxTokens : ''), 'total-tokens');
  row(dl, 'cost', usd(D.costUsd) + (D.budget.maxCostUsd ? ' of $' + D.budget.maxCostUsd : ''), 'total-cost');
  row(dl, 'wall time', secs(D.wallMs));
  row(dl, 'journal', D.journal);
  if (D.message) row(dl, 'message', D.message);
  if (D.firstFailure) row(dl, 'first failure', 'task ' + D.firstFailure.task + ', phase ' + D.firstFailure.phase + ', class ' + D.firstFailure.class + ' (' + D.firstFailure.reason + ')', 'first-failure');
  if (D.resumeCommand) row(dl, 'to go on', D.resumeCommand, 'resume-command');
  if (D.resumeNote) row(dl, 'note', D.resumeNote, 'resume-note');
  root.append(dl);
}
let page = 0;
const pages = Math.max(1, Math.ceil(D.tasks.length / PAGE));
const byTask = new Map();
for (const a of D.attempts) { if (!byTask.has(a.task)) byTask.set(a.task, []); byTask.get(a.task).push(a); }
function pager() {
  const p = document.getElementById('pager');
  p.replaceChildren();
  if (pages === 1) return;
  const prev = el('button', { id: 'prev' }, '‹ prev'); prev.disabled = page === 0;
  const next = el('button', { id: 'next' }, 'next ›'); next.disabled = page === pages - 1;
  prev.addEventListener('click', () => { page--; draw(); });
  next.addEventListener('click', () => { page++; draw(); });
  p.append(prev, el('span', {}, 'tasks ' + (page * PAGE + 1) + '–' + Math.min(D.tasks.length, (page + 1) * PAGE) + ' of ' + D.tasks.length), next);
}
function tasksTable(shown) {
  const body = document.getElementById('task-rows');
  body.replaceChildren();
  for (const t of shown) {
    const tr = el('tr', { class: 'task-row' });
    tr.append(el('td', {}, t.id), el('td', { class: 'st-' + t.state }, t.state), el('td', {}, t.needs.join(', ') || '-'),
      el('td', {}, t.attempts), el('td', {}, t.tokens), el('td', {}, usd(t.costUsd)));
    body.append(tr);
  }
}
function timeline(shown) {
  const host = document.getElementById('timeline');
  host.replaceChildren();
  const end = Math.max(1, D.wallMs, ...D.attempts.map((a) => Math.max(a.end ?? a.start, a.waitUntil ?? 0)));
  const label = 160, width = 1000, lane = 16;
  const x = (ms) => label + (ms / end) * (width - label - 10);
  const s = svg('svg', { width, height: shown.length * lane + 24, id: 'timeline-svg' });
  s.append(svg('line', { x1: label, x2: width - 10, y1: shown.length * lane + 4, y2: shown.length * lane + 4, class: 'axis' }));
  shown.forEach((t, i) => {
    const y = i * lane + 2;
    const name = svg('text', { x: 0, y: y + 11, class: 'lane-label' }); name.textContent = t.id; s.append(name);
    for (const a of byTask.get(t.id) || []) {
      const earlier = a.run !== D.runs[D.runs.length - 1].runId;
      const g = svg('g', { class: 'attempt-bar' + (a.outcome && a.outcome !== 'success' ? (a.class === 'interrupted' ? ' interrupted-bar' : ' failed-bar') : '') + (earlier ? ' earlier-run' : ''), 'data-task': t.id, 'data-attempt': a.attempt, 'data-run': a.run });
      const title = svg('title', {}); title.textContent = (earlier ? 'run ' + a.run + ': ' : '') + t.id + ' #' + a.attempt + ': ' + (a.outcome ?? 'open') + (a.reason && a.reason !== 'ok' ? ' (' + a.reason + ')' : '') + (a.jobs.length ? ', Slurm job ' + a.jobs.map((j) => j.jobId).join(' ') : ''); g.append(title);
      const stop = a.end ?? D.wallMs;
      g.append(svg('rect', { x: x(a.start), y, width: Math.max(1, x(stop) - x(a.start)), height: lane - 4, class: 'ph-open' }));
      for (const p of a.phases) g.append(svg('rect', { x: x(p.from), y, width: Math.max(1, x(p.to) - x(p.from)), height: lane - 4, class: 'ph-' + p.phase }));
      for (const r of a.rounds) g.append(svg('line', { x1: x(r), x2: x(r), y1: y - 1, y2: y + lane - 3, class: 'tick' }));
      if (a.waitUntil !== null && a.end !== null && a.waitUntil > a.end) g.append(svg('rect', { x: x(a.end), y: y + 4, width: x(a.waitUntil) - x(a.end), height: lane - 12, class: 'wait' }));
      s.append(g);
    }
  });
  for (const m of D.marks) {
    const cls = m.kind === 'checkpoint-adopted' ? 'mark-adopted' : m.kind === 'journal-failed' ? 'mark-journal' : m.kind === 'run-continued' ? 'mark-continued' : 'mark-crash';
    const line = svg('line', { x1: x(m.at), x2: x(m.at), y1: 0, y2: shown.length * lane + 4, class: 'run-mark ' + cls, 'data-kind': m.kind });
    const title = svg('title', {}); title.textContent = m.kind + (m.task ? ' ' + m.task : ''); line.append(title);
    s.append(line);
  }
  host.append(s);
}
function costCurve() {
  const host = document.getElementById('cost');
  const ends = D.attempts.filter((a) => a.end !== null).sort((a, b) => a.end - b.end);
  const total = Math.max(D.costUsd, D.budget.maxCostUsd || 0, 1e-9);
  const w = 600, h = 120, end = Math.max(1, D.wallMs);
  const s = svg('svg', { width: w, height: h + 10, id: 'cost-svg' });
  let sum = 0; const pts = ['0,' + h];
  for (const a of ends) { sum += a.costUsd; pts.push(((a.end / end) * w).toFixed(1) + ',' + (h - (sum / total) * h).toFixed(1)); }
  s.append(svg('line', { x1: 0, x2: w, y1: h, y2: h, class: 'axis' }));
  s.append(svg('polyline', { points: pts.join(' '), class: 'curve' }));
  if (D.budget.maxCostUsd) s.append(svg('line', { x1: 0, x2: w, y1: 0, y2: 0, class: 'budget' }));
  host.append(s, el('div', {}, 'cumulative cost ' + usd(D.costUsd) + (D.budget.maxCostUsd ? ' against a budget of $' + D.budget.maxCostUsd : ' (no cost budget)')));
}
function failures() {
  const host = document.getElementById('failures');
  // An attempt the run's interruption stopped (class interrupted: SIGINT, SIGTERM, SIGHUP) is
  // not a failure of its task: listed apart, as the live table counts it apart.
  const closed = D.attempts.filter((a) => a.outcome !== null && a.outcome !== 'success');
  const failed = closed.filter((a) => a.class !== 'interrupted');
  const stopped = closed.filter((a) => a.class === 'interrupted');
  if (failed.length === 0) host.append(el('p', {}, 'No attempt failed.'));
  for (const a of failed.slice(0, 500)) {
    const div = el('div', { class: 'failure' });
    div.append(el('strong', {}, a.task + ' #' + a.attempt + ': ' + a.class + ' (' + a.reason + ')'));
    if (a.fingerprint) div.append(el('span', {}, ' fingerprint ' + a.fingerprint.slice(0, 8)));
    if (a.verdict) div.append(el('div', { class: 'verdict' }, a.verdict));
    if (a.message) div.append(el('pre', { class: 'agent-text' }, a.message));
    for (const j of a.jobs) div.append(el('div', { class: 'job' }, 'Slurm job ' + j.jobId + ' (' + j.phase + '): ' + (j.state ?? 'no record')));
    for (const p of a.evidence) { const line = el('div'); line.append(el('code', {}, p)); div.append(line); }
    host.append(div);
  }
  if (failed.length > 500) host.append(el('p', {}, (failed.length - 500) + ' more failed attempts: runplan report --json'));
  if (stopped.length > 0) {
    const shown = stopped.slice(0, 500).map((a) => a.task + ' #' + a.attempt).join(', ');
    host.append(el('p', { id: 'interrupted' }, 'Interrupted, not failed (' + stopped.length + '): ' + shown + (stopped.length > 500 ? ', …' : '')));
  }
}
function draw() {
  const shown = D.tasks.slice(page * PAGE, (page + 1) * PAGE);
  pager(); tasksTable(shown); timeline(shown);
}
${GRAPH_SCRIPT}
header(); graph(); draw(); costCurve(); failures();
document.body.setAttribute('data-rendered', 'yes');
`;

// The whole page.
export function reportHtml(data: ReportData): string {
  const nonce = randomBytes(16).toString('base64');
  const legend = ['pre_run', 'command', 'gates', 'post_run', 'integrate', 'checkpoint']
    .map((p) => `<span><svg class="sw" width="10" height="10"><rect width="10" height="10" class="ph-${p}"/></svg>${p}</span>`)
    .join('')
    .concat('<span><svg class="sw" width="10" height="10"><rect width="10" height="10" class="wait"/></svg>provider wait</span>');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:">
<title>runplan report</title>
<style nonce="${nonce}">${CSS}</style>
</head><body>
<section id="receipt"></section>
<h2>Task graph</h2><div id="graph"></div>
<h2>Tasks</h2><div id="pager"></div>
<table><thead><tr><th>task</th><th>state</th><th>needs</th><th>attempts</th><th>tokens</th><th>cost</th></tr></thead><tbody id="task-rows"></tbody></table>
<h2>Timeline</h2><div class="legend">${legend}<span>| round tick</span><span>dashed: coordinator crash / adopted checkpoint / a continuation's start (earlier runs' attempts faded)</span></div>
<div id="timeline"></div>
<h2>Cost</h2><div id="cost"></div>
<h2>Failures</h2><div id="failures"></div>
<script type="application/json" id="report-data">${embedJson(data)}</script>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>
`;
}
