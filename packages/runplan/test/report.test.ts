import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin, tempDir, withTimeout } from '@runplan/test-fixtures';
import type { JournalRecord } from '@runplan/journal';
import { RunView } from '../src/events/view.js';
import { reportData } from '../src/observe/report-data.js';
import { embedJson, PAGE_SIZE, reportHtml } from '../src/observe/report-html.js';
import { GRAPH_LIMIT } from '../src/observe/report-graph.js';
import { render } from './chromium.js';
import { HOSTILE, HOSTILE_PLAN } from './hostile.js';
import { alive, ofType, records, RUNPLAN, runIds, runplan, slugDir, waitForEvent, waitForLine, withPlan } from './support.js';

const count = (dom: string, pattern: RegExp): number => dom.match(pattern)?.length ?? 0;
// The text of the element with this id in the dumped DOM.
const textOf = (dom: string, id: string): string => new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(dom)?.[1] ?? '';

test(
  'runplan report: the HTML of a 13-task run renders in Chromium — a row per task, a bar per attempt, totals equal to the receipt, nothing logged, not blank',
  withPlan('thirteen', { timeoutMs: 240_000 }, async (f) => {
    const run = await runplan(['run', f.plan, '--jobs', '4'], f);
    assert.is(run.exitCode, 0, run.stderr);
    // Written at the receipt already, and named under the summary.
    const written = /^ {2}report: (.*report\.html)$/m.exec(run.stderr)?.[1];
    assert.ok(written !== undefined && existsSync(written), run.stderr);
    const r = await runplan(['report', '--repo', f.repo.path], f);
    assert.is(r.exitCode, 0, r.stderr);
    const [id] = runIds(f.repo, 'thirteen');
    const file = join(slugDir(f.repo, 'thirteen'), id!, 'report.html');
    assert.match(r.stderr, new RegExp(`report: ${file.replace(/[.]/g, '\\.')}`));
    const html = readFileSync(file, 'utf8');
    assert.not.match(html, /\b(src|href)=["']?(https?:|\/\/)/, 'no external asset');
    const receipt = ofType(await records(f.repo, 'thirteen'), 'run-complete')[0]!;
    const shown = await render(file);
    assert.equal(shown.console, [], 'nothing is logged to the console');
    assert.match(shown.dom, /data-rendered="yes"/);
    assert.is(count(shown.dom, /class="task-row"/g), 13);
    // The task graph: a box per task, an edge per need (the data's own needs), every task done.
    const needs = (
      JSON.parse((await runplan(['report', 'thirteen', '--json', '--repo', f.repo.path], f)).stdout) as {
        tasks: Array<{ needs: string[] }>;
      }
    ).tasks.reduce((n, t) => n + t.needs.length, 0);
    assert.ok(needs > 0);
    assert.is(count(shown.dom, /class="graph-node"/g), 13);
    assert.is(count(shown.dom, /class="graph-edge"/g), needs);
    assert.is(count(shown.dom, /data-state="done"/g), 13);
    assert.is(count(shown.dom, /class="attempt-bar[^"]*"/g), receipt.attempts);
    const tokens =
      receipt.usage.inputTokens + receipt.usage.outputTokens + receipt.usage.cacheReadTokens + receipt.usage.cacheCreationTokens;
    assert.is(textOf(shown.dom, 'total-tokens'), String(tokens));
    assert.is(textOf(shown.dom, 'total-cost'), `$${receipt.costUsd.toFixed(4)}`);
    assert.is(textOf(shown.dom, 'total-attempts'), String(receipt.attempts));
    assert.ok(shown.inked > shown.pixels / 100, `the screenshot is not blank: ${shown.inked} of ${shown.pixels} pixels inked`);
    // --json: the same data, on stdout.
    const json = await runplan(['report', 'thirteen', '--json', '--repo', f.repo.path], f);
    assert.is(json.exitCode, 0, json.stderr);
    const data = JSON.parse(json.stdout) as { attemptsTotal: number; tasks: unknown[]; outcome: string };
    assert.is(data.attemptsTotal, receipt.attempts);
    assert.is(data.tasks.length, 13);
    assert.is(data.outcome, 'complete');
  }),
);

// Four chained tasks; c fails its first attempt for good (task cap 1) and passes its second.
const CRASH_PLAN = `slug = "crashy"
base = "main"
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
deadline = "1m"
grace = "2s"

[[tasks]]
id = "a"
prompt = "mock: write out/a.txt a"

[[tasks]]
id = "b"
needs = ["a"]
prompt = "mock: write out/b.txt b"

[[tasks]]
id = "c"
needs = ["b"]
repair = { task = 1 }
prompt = """
mock: fail-first 1
mock: write out/c.txt c
"""

[[tasks]]
id = "d"
needs = ["c"]
prompt = "mock: write out/d.txt d"
`;

// Two tasks side by side: x fails for good (no repair), h holds until the run is interrupted.
const INTERRUPT_PLAN = `slug = "stopped"
base = "main"
jobs = 2
[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
deadline = "1m"
grace = "2s"

[[tasks]]
id = "x"
repair = { task = 0 }
prompt = "mock: fail-first 1"

[[tasks]]
id = "h"
prompt = "mock: write out/h.txt h"

[[tasks]]
id = "after"
needs = ["x"]
prompt = "mock: write out/after.txt after"
`;

test(
  'an interrupted run after a failure: the summary and receipt name the failure as the first, with its own class; the report lists the attempt SIGINT stopped as interrupted, not among the failures (Chromium)',
  withPlan(INTERRUPT_PLAN, { timeoutMs: 180_000, env: { MOCK_HOLD: 'h:1', MOCK_HOLD_SECONDS: '120' } }, async (f) => {
    let pid = 0;
    const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 120_000, onSpawn: (p) => (pid = p) });
    // x's attempt closed (failed), h's agent holding: then Ctrl-C.
    const journal = await waitForEvent(f.repo, 'stopped', 'attempt-closed', 100_000);
    await waitForLine(f.ledger, (l) => l.startsWith('h 1 '), 100_000);
    assert.is(ofType(await records(f.repo, 'stopped'), 'attempt-closed').length, 1, journal);
    process.kill(pid, 'SIGINT');
    const r = await running;
    assert.is(r.exitCode, 130, r.stderr);
    // The summary and the receipt: x failed on its own before the signal, h was interrupted.
    assert.match(
      r.stderr,
      /^runplan: interrupted: class interrupted: interrupted by SIGINT\n {2}first failure: task x, phase command, class task \(exited\)\n {2}evidence: .*\/x\.1\//m,
    );
    const receipt = ofType(await records(f.repo, 'stopped'), 'run-failed')[0]!;
    assert.equal(
      [receipt.class, receipt.task, receipt.firstFailure],
      ['interrupted', 'x', { task: 'x', class: 'task', reason: 'exited', phase: 'command' }],
    );
    const file = /^ {2}report: (.*report\.html)$/m.exec(r.stderr)?.[1];
    assert.ok(file !== undefined && existsSync(file), r.stderr);
    const shown = await render(file);
    assert.equal(shown.console, [], 'nothing is logged to the console');
    assert.match(shown.dom, /data-rendered="yes"/);
    // Failures: x alone, with its class and reason; h apart, as interrupted.
    assert.is(count(shown.dom, /class="failure"/g), 1);
    assert.match(shown.dom, /<strong>x #1: task \(/);
    assert.not.match(shown.dom, /<strong>h #1/);
    assert.is(textOf(shown.dom, 'interrupted'), 'Interrupted, not failed (1): h #1');
    assert.is(textOf(shown.dom, 'first-failure'), 'task x, phase command, class task (exited)');
    // The graph and the table show h as interrupted, x as failed.
    assert.match(shown.dom, /data-task="h" data-state="interrupted"><title>[^<]*<\/title><rect [^>]*class="gn-interrupted"/);
    assert.match(shown.dom, /data-task="x" data-state="failed"><title>[^<]*<\/title><rect [^>]*class="gn-failed"/);
    // x's dependant never ran, and never will in this run: not dispatched, not waiting.
    assert.match(shown.dom, /data-task="after" data-state="not_dispatched"><title>[^<]*<\/title><rect [^>]*class="gn-not_dispatched"/);
    // The timeline marks them apart too: one failed bar, one interrupted bar.
    assert.is(count(shown.dom, /class="attempt-bar failed-bar"/g), 1);
    assert.is(count(shown.dom, /class="attempt-bar interrupted-bar"/g), 1);
  }),
);

test(
  'the report of a crashed, resumed and continued run in Chromium: every run folded in, crash and resume marks, adopted checkpoints, the task graph',
  withPlan(CRASH_PLAN, { timeoutMs: 240_000, env: { MOCK_HOLD: 'b:1', MOCK_HOLD_SECONDS: '120' } }, async (f) => {
    // kill -9 of the coordinator while b's first agent holds (it is left running, an orphan).
    let pid = 0;
    const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 120_000, onSpawn: (p) => (pid = p) });
    await waitForLine(f.ledger, (l) => l.startsWith('b 1 '), 100_000);
    process.kill(pid, 'SIGKILL');
    assert.is((await running).signal, 'SIGKILL');
    const orphan = readLedger(f.ledger).find((e) => e.task === 'b')!;
    // The resume takes the run over (the orphan ended, b again), then c fails for good: the run fails.
    const resumed = await runplan(['run', f.plan], f);
    assert.is(resumed.exitCode, 1, resumed.stderr);
    assert.not.ok(alive(orphan.pid), 'the resume ended the crashed attempt');
    // A new run continues it: a and b adopted, c retried, d run.
    const continued = await runplan(['run', f.plan, '--retry', 'c'], f);
    assert.is(continued.exitCode, 0, continued.stderr);
    const [first, second] = runIds(f.repo, 'crashy');
    assert.ok(first !== undefined && second !== undefined, 'two runs');
    const file = /^ {2}report: (.*report\.html)$/m.exec(continued.stderr)?.[1];
    assert.is(file, join(slugDir(f.repo, 'crashy'), second!, 'report.html'), continued.stderr);

    const json = await runplan(['report', 'crashy', '--json', '--repo', f.repo.path], f);
    assert.is(json.exitCode, 0, json.stderr);
    const data = JSON.parse(json.stdout) as {
      runs: Array<{ runId: string; outcome: string }>;
      attemptsTotal: number;
      crashes: number;
      attempts: Array<{ run: string; task: string; attempt: number; reason: string | null }>;
      tasks: Array<{ id: string; state: string; attempts: number }>;
    };
    assert.equal(
      data.runs.map((r) => [r.runId, r.outcome]),
      [
        [first, 'failed'],
        [second, 'complete'],
      ],
    );
    // a#1, b#1 (crashed), b#2, c#1 in the first run; c#2, d#1 in the continuation.
    assert.equal(
      data.attempts.map((a) => `${a.run === first ? 1 : 2}:${a.task}#${a.attempt}`),
      ['1:a#1', '1:b#1', '1:b#2', '1:c#1', '2:c#2', '2:d#1'],
    );
    assert.is(data.attempts[1]!.reason, 'coordinator_crashed');
    assert.is(data.attemptsTotal, 6);
    assert.is(data.crashes, 1);
    assert.equal(
      data.tasks.map((t) => `${t.id} ${t.state} ${t.attempts}`),
      ['a adopted 1', 'b adopted 2', 'c done 2', 'd done 1'],
    );

    const shown = await render(file!);
    assert.equal(shown.console, [], 'nothing is logged to the console');
    assert.match(shown.dom, /data-rendered="yes"/);
    assert.is(count(shown.dom, /class="attempt-bar[^"]*"/g), 6);
    assert.is(count(shown.dom, /class="attempt-bar[^"]*earlier-run[^"]*"/g), 4, "the first run's attempts, faded");
    assert.is(count(shown.dom, /data-kind="coordinator-crashed"/g), 1, 'the crash and its resume');
    assert.is(count(shown.dom, /data-kind="checkpoint-adopted"/g), 2, 'the adopted checkpoints');
    assert.is(count(shown.dom, /data-kind="run-continued"/g), 1, 'where the continuation starts');
    assert.is(textOf(shown.dom, 'total-attempts'), '6');
    assert.match(textOf(shown.dom, 'runs'), new RegExp(`^${first} failed → ${second} complete \\(×2\\)$`));
    // The task graph: a box per task in its state, an edge per need.
    assert.is(count(shown.dom, /class="graph-node"/g), 4);
    assert.is(count(shown.dom, /class="graph-edge"/g), 3);
    assert.match(shown.dom, /data-task="a" data-state="adopted"/);
    assert.match(shown.dom, /data-task="d" data-state="done"/);
    assert.ok(shown.inked > shown.pixels / 100, `the screenshot is not blank: ${shown.inked} of ${shown.pixels} pixels inked`);
  }),
);

test(
  'agent text is untrusted: an error of </script><img onerror> and an OSC title sequence renders as text in Chromium, no element, nothing logged',
  withPlan(HOSTILE_PLAN, { timeoutMs: 180_000 }, async (f) => {
    const run = await runplan(['run', f.plan], f);
    assert.is(run.exitCode, 1, run.stderr);
    // On stderr the control characters are shown, never sent.
    assert.not.match(run.stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/, 'no control character on stderr');
    assert.ok(run.stderr.includes('\\x1b]0;pwned\\x07'), run.stderr);
    const outDir = tempDir('runplan-report-');
    const out = join(outDir.path, 'r.html');
    const r = await runplan(['report', 'hostile', '--out', out, '--repo', f.repo.path], f);
    assert.is(r.exitCode, 0, r.stderr);
    const html = readFileSync(out, 'utf8');
    assert.not.ok(html.includes(HOSTILE), 'the agent text is not in the file as markup');
    assert.match(html, /Content-Security-Policy/);
    const shown = await render(out);
    outDir.cleanup();
    assert.equal(shown.console, []);
    assert.match(shown.dom, /data-rendered="yes"/);
    assert.is(count(shown.dom, /<img/g), 0, 'no element from the agent text');
    assert.ok(
      shown.dom.includes('&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;'),
      `shown as text: ${/<pre class="agent-text">[^<]*/.exec(shown.dom)?.[0]}`,
    );
    // stdout: the HTML itself.
    const piped = await runplan(['report', 'hostile', '--out', '-', '--repo', f.repo.path], f);
    assert.is(piped.exitCode, 0);
    assert.match(piped.stdout, /^<!doctype html>/);
  }),
);

test(
  'runplan report exits 1 for no such slug and for no such run; 5 (io_error, path and errno named) when --out cannot be written',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    assert.is((await runplan(['run', f.plan], f)).exitCode, 0);
    const slug = await runplan(['report', 'nope', '--repo', f.repo.path], f);
    assert.is(slug.exitCode, 1);
    assert.match(slug.stderr, /no_such_slug/);
    const run = await runplan(['report', 'single', '--run', '20200101T000000Z-abcd', '--repo', f.repo.path], f);
    assert.is(run.exitCode, 1);
    assert.match(run.stderr, /no_such_run/);
    assert.not.ok(existsSync(join(slugDir(f.repo, 'single'), '20200101T000000Z-abcd')));
    const nowhere = join(f.repo.path, 'no-such-dir', 'x.html');
    const unwritable = await runplan(['report', 'single', '--out', nowhere, '--repo', f.repo.path], f);
    assert.is(unwritable.exitCode, 5, unwritable.stderr);
    assert.ok(unwritable.stderr.includes(`runplan: io_error: cannot write the report ${nowhere}: ENOENT`), unwritable.stderr);
    assert.not.match(unwritable.stderr, /internal_error/);
  }),
);

test(
  'the report of a run whose journal is corrupt says corrupt (offset, seq, reason) and goes on with --fresh, as run would say; never incomplete with a plain run',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    assert.is((await runplan(['run', f.plan], f)).exitCode, 0);
    const [id] = runIds(f.repo, 'single');
    const journal = join(slugDir(f.repo, 'single'), id!, 'journal.jsonl');
    const bytes = readFileSync(journal);
    const at = bytes.indexOf('"type":"checkpoint"');
    bytes[at + 10]! ^= 1;
    writeFileSync(journal, bytes);
    const refused = await runplan(['run', f.plan, '--dry-run'], f);
    assert.is(refused.exitCode, 3, refused.stderr);
    assert.match(refused.stderr, /journal_corrupt/);
    const json = await runplan(['report', 'single', '--json', '--repo', f.repo.path], f);
    assert.is(json.exitCode, 0, json.stderr);
    const data = JSON.parse(json.stdout) as { outcome: string; message: string; resumeCommand: string };
    assert.is(data.outcome, 'corrupt');
    assert.match(data.message, /^the journal is corrupt at offset \d+ \(seq \d+\): crc_mismatch/);
    assert.is(data.resumeCommand, `runplan run ${f.plan} --fresh`);
    const out = join(f.repo.path, 'corrupt.html');
    assert.is((await runplan(['report', 'single', '--out', out, '--repo', f.repo.path], f)).exitCode, 0);
    const shown = await render(out);
    assert.match(textOf(shown.dom, 'outcome'), /^runplan single: corrupt$/);
    assert.match(textOf(shown.dom, 'resume-command'), /--fresh$/);
  }),
);

test(
  'a report that cannot be written at the receipt changes neither the exit code nor the receipt',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { ...f, env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:run-started' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [id] = runIds(f.repo, 'single');
    // A directory where the report goes: the atomic rename onto it fails.
    mkdirSync(join(slugDir(f.repo, 'single'), id!, 'report.html', 'blocker'), { recursive: true });
    const resumed = await runplan(['run', f.plan], f);
    assert.is(resumed.exitCode, 0, resumed.stderr);
    assert.not.match(resumed.stderr, /report: /);
    const rs = await records(f.repo, 'single');
    assert.is(rs.at(-1)!.type, 'run-complete');
    assert.is(rs.filter((x) => x.terminal === true).length, 1);
  }),
);

test('embedded JSON holds no <, >, &, U+2028 or U+2029 as themselves', () => {
  const text = embedJson({ m: '</script>&<!--\u2028\u2029' });
  assert.not.match(text, /[<>&\u2028\u2029]/);
  assert.equal(JSON.parse(text), { m: '</script>&<!--\u2028\u2029' });
});

// Records as the coordinator journals them (only the fields the fold and the report read).
function rec(seq: number, ts: number, type: string, data: Record<string, unknown>, terminal = false): JournalRecord {
  return {
    seq,
    prev: '00000000',
    ts: new Date(ts).toISOString(),
    type,
    data,
    ...(terminal ? { terminal: true as const } : {}),
  } as JournalRecord;
}

test(
  'a generated run of 5 000 tasks and 10 000 attempts: the report stays usable (paged), its totals whole, nothing logged',
  withTimeout(240_000, async () => {
    const view = new RunView();
    const t0 = Date.parse('2026-11-29T07:00:00Z');
    let seq = 0;
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheCreationTokens: 0 };
    view.add(rec(seq++, t0, 'journal-header', { format: 1, runId: 'r', salt: 's' }));
    view.add(rec(seq++, t0, 'run-started', { logicalRunId: 'big', slug: 'big', taskCount: 5000, usageCarried: usage, costCarried: 0 }));
    for (let i = 0; i < 5000; i++) {
      const taskId = `t${String(i).padStart(4, '0')}`;
      for (const attempt of [1, 2]) {
        const at = t0 + i * 100 + attempt * 40;
        view.add(rec(seq++, at, 'attempt-started', { taskId, attempt, ownerTag: 'o', evidenceDir: '/e', worktree: '' }));
        view.add(rec(seq++, at + 10, 'command-settled', { taskId, attempt, usage, costUsd: 0.001 }));
        const ok = attempt === 2;
        view.add(
          rec(seq++, at + 20, 'attempt-closed', {
            taskId,
            attempt,
            outcome: ok ? 'success' : 'failed',
            reason: ok ? 'ok' : 'gate_failed',
            class: ok ? null : 'gate',
            failure: ok ? null : { class: 'gate', reason: 'gate_failed', phase: 'gates', message: 'npm test failed', evidenceTail: '' },
            evidence: [],
          }),
        );
        if (!ok)
          view.add(
            rec(seq++, at + 21, 'repair-decided', {
              taskId,
              attempt,
              class: 'gate',
              fingerprint: 'a1b2c3d4',
              action: 'retry',
              changed: 'evidence',
              delayMs: 0,
            }),
          );
        else view.add(rec(seq++, at + 22, 'checkpoint', { taskId, attempt, resultCommit: 'c'.repeat(40) }));
      }
    }
    assert.is(view.attemptsTotal, 10_000);
    const data = await reportData(view, { journal: '/j', resumeCommand: null });
    const dir = tempDir('runplan-big-report-');
    try {
      const file = join(dir.path, 'report.html');
      const html = reportHtml(data);
      writeFileSync(file, html);
      assert.is(count(html, /"task":"t0000"/g), 2, 'the data is embedded once');
      const shown = await render(file);
      assert.equal(shown.console, []);
      assert.is(count(shown.dom, /class="task-row"/g), PAGE_SIZE);
      assert.is(count(shown.dom, /class="attempt-bar[^"]*"/g), PAGE_SIZE * 2);
      assert.is(textOf(shown.dom, 'total-attempts'), '10000');
      assert.is(textOf(shown.dom, 'total-tasks'), '5000/5000');
      assert.match(shown.dom, /tasks 1–200 of 5000/);
      // No graph of 5000 boxes: a note says so (the table pages through the tasks).
      assert.is(count(shown.dom, /class="graph-node"/g), 0);
      assert.match(
        shown.dom,
        new RegExp(`id="graph-skipped">The task graph is drawn for plans of up to ${GRAPH_LIMIT} tasks; this one has 5000`),
      );
      assert.ok(shown.inked > shown.pixels / 100);
    } finally {
      dir.cleanup();
    }
  }),
);

test.run();
