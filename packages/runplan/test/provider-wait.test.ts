// A provider refusal (class provider) holds the task back: the coordinator journals
// provider-wait {taskId, attempt, reason, until}, and progress, `status` and the report say
// what the run waits for and until when (real bin; the mock agent is refused with a 429).
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { parseJsonLines, readLedger, runBin, tempDir } from '@runplan/test-fixtures';
import type { JournalRecord } from '@runplan/journal';
import { Progress, SafeOutput } from '../src/observe/progress.js';
import { render } from './chromium.js';
import { RUNPLAN, records, runplan, waitForEvent, waitUntil, withPlan } from './support.js';

// The UTC clock of a time as progress and status print it: with its date when that is not
// today's (a reset an hour ahead, asked after 23:00 UTC, is tomorrow).
const clock = (ms: number): string => {
  const at = new Date(ms).toISOString();
  const day = at.slice(0, 10) === new Date().toISOString().slice(0, 10) ? '' : `${at.slice(0, 10)} `;
  return `${day}${at.slice(11, 19)} UTC`;
};

test(
  'a backoff after a 429: provider-wait after repair-decided, before the retry; the progress line and the report show it',
  withPlan('rate-limit', { timeoutMs: 90_000 }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(readLedger(f.ledger).length, 2);
    const rs = await records(f.repo, 'rate-limit');
    const types = rs.map((x) => x.type);
    const at = types.indexOf('provider-wait');
    assert.ok(at > 0, types.join(' '));
    assert.is(types.filter((t) => t === 'provider-wait').length, 1);
    assert.is(types[at - 1], 'repair-decided');
    assert.is(rs.slice(at).find((x) => x.type === 'attempt-started')?.data.attempt, 2, 'the retry comes after the wait');
    const wait = rs[at]!;
    assert.equal(
      { ...wait.data, until: undefined },
      { taskId: 'limited', attempt: 1, reason: 'provider_limited', until: undefined, delayMs: 100, source: 'backoff' },
    );
    // The backoff counts from the decision: 100 ms after repair-decided at the earliest, at most 100 ms after this record.
    const until = Date.parse(String(wait.data.until));
    assert.ok(until - Date.parse(rs[at - 1]!.ts) >= 100, `${until} vs repair-decided ${rs[at - 1]!.ts}`);
    assert.ok(until - Date.parse(wait.ts) <= 100, `${until} vs provider-wait ${wait.ts}`);
    // stderr is no terminal here: one line per event.
    assert.match(r.stderr, `provider-wait limited #1: provider_limited, waiting for provider until ${clock(until)} (in `);
    // The report draws the wait after attempt 1.
    const report = await runplan(['report', 'rate-limit', '--json', '--out', '-'], f);
    assert.is(report.exitCode, 0, report.stderr);
    const data = JSON.parse(report.stdout) as { attempts: Array<{ attempt: number; end: number; waitUntil: number | null }> };
    const first = data.attempts.find((a) => a.attempt === 1)!;
    assert.ok(first.waitUntil !== null && first.waitUntil >= first.end, JSON.stringify(first));
    assert.is(data.attempts.find((a) => a.attempt === 2)!.waitUntil, null);
    // The HTML draws the wait as a bar of class "wait", and its legend names that swatch.
    const out = join(f.repo.path, 'wait.html');
    assert.is((await runplan(['report', 'rate-limit', '--out', out], f)).exitCode, 0);
    const shown = await render(out);
    assert.match(shown.dom, /<g class="attempt-bar[^"]*"[^>]*>(?:(?!<\/g>).)*<rect [^>]*class="wait"/s, 'the wait bar is drawn');
    const legend = /<div class="legend">(.*?)<\/div>/s.exec(shown.dom)?.[1] ?? '';
    assert.match(legend, /<rect [^>]*class="wait"[^>]*>(?:<\/rect>)?<\/svg>provider wait<\/span>/, legend);
  }),
);

test(
  'while the coordinator waits for a named reset, status says which task waits for the provider until when; the report too',
  withPlan('rate-limit', { timeoutMs: 90_000 }, async (f) => {
    const resetAt = Math.floor(Date.now() / 1000) + 3600;
    const plan = f.plan;
    writeFileSync(plan, readFileSync(plan, 'utf8').replace('on-attempt 1 rate-limit', `on-attempt 1 rate-limit ${resetAt}`));
    const running = runplan(['run', plan], f, 80_000);
    try {
      await waitForEvent(f.repo, 'rate-limit', 'provider-wait');
      const wait = (await records(f.repo, 'rate-limit')).find((x) => x.type === 'provider-wait')!;
      assert.is(wait.data.source, 'reset');
      assert.is(Date.parse(String(wait.data.until)), resetAt * 1000);
      const status = await runplan(['status', 'rate-limit'], f);
      assert.is(status.exitCode, 0, status.stderr);
      assert.match(status.stdout, `running (limited waiting for provider until ${clock(resetAt * 1000)})`);
      const json = await runplan(['status', 'rate-limit', '--json'], f);
      assert.is(json.exitCode, 0, json.stderr);
      const row = parseJsonLines(json.stdout)[0] as { state: string; providerWaits: unknown[] };
      assert.is(row.state, 'running');
      assert.equal(row.providerWaits, [
        { taskId: 'limited', attempt: 1, until: new Date(resetAt * 1000).toISOString(), reason: 'provider_limited' },
      ]);
      const report = await runplan(['report', 'rate-limit', '--json', '--out', '-'], f);
      assert.is(report.exitCode, 0, report.stderr);
      const data = JSON.parse(report.stdout) as { attempts: Array<{ waitUntil: number | null }> };
      assert.ok(data.attempts[0]!.waitUntil !== null);
    } finally {
      const stop = await runplan(['stop', 'rate-limit', '--wait', '60s'], f);
      assert.is(stop.exitCode, 0, stop.stderr);
    }
    const r = await running;
    assert.is(r.exitCode, 143, r.stderr);
    // A run that is no longer waiting (stopped: it has its receipt) shows no wait.
    const after = await runplan(['status', 'rate-limit', '--json'], f);
    assert.equal((parseJsonLines(after.stdout)[0] as { providerWaits: unknown[] }).providerWaits, []);
  }),
);

test(
  'two tasks waiting for the provider: status names the first and counts the others, never shows one as if it were all',
  withPlan('rate-limit', { timeoutMs: 90_000 }, async (f) => {
    const resetAt = Math.floor(Date.now() / 1000) + 3600;
    const text = readFileSync(f.plan, 'utf8').replace('on-attempt 1 rate-limit', `on-attempt 1 rate-limit ${resetAt}`);
    const second = text.slice(text.indexOf('[[tasks]]')).replace('id = "limited"', 'id = "other"').replaceAll('limited.txt', 'other.txt');
    writeFileSync(f.plan, `jobs = 2\n${text}\n${second}`);
    const running = runplan(['run', f.plan], f, 80_000);
    try {
      await waitForEvent(f.repo, 'rate-limit', 'provider-wait');
      await waitUntil(
        'both tasks wait for the provider',
        async () => (await records(f.repo, 'rate-limit')).filter((x) => x.type === 'provider-wait').length === 2,
      );
      const status = await runplan(['status', 'rate-limit'], f);
      assert.is(status.exitCode, 0, status.stderr);
      assert.match(
        status.stdout,
        new RegExp(`running \\((limited|other) waiting for provider until ${clock(resetAt * 1000)}, \\+1 more\\)`),
      );
    } finally {
      const stop = await runplan(['stop', 'rate-limit', '--wait', '60s'], f);
      assert.is(stop.exitCode, 0, stop.stderr);
    }
    assert.is((await running).exitCode, 143);
  }),
);

test(
  'in tmux: while the coordinator backs off, the live table row says waiting for provider until HH:MM:SS UTC, not failed',
  withPlan('rate-limit', { timeoutMs: 120_000, replacements: { 'backoff = "100ms"': 'backoff = "1h"' } }, async (f) => {
    const dir = tempDir('runplan-tmux-');
    const socket = join(dir.path, 'sock');
    const env = { ...f.env, TERM: 'xterm-256color' };
    const tmux = (args: string[]) => runBin('tmux', ['-S', socket, '-f', '/dev/null', ...args], { env, timeoutMs: 20_000 });
    try {
      const started = await tmux(['new-session', '-d', '-x', '120', '-y', '20', process.execPath, RUNPLAN, 'run', f.plan]);
      assert.is(started.exitCode, 0, started.stderr);
      await waitForEvent(f.repo, 'rate-limit', 'provider-wait');
      const wait = (await records(f.repo, 'rate-limit')).find((x) => x.type === 'provider-wait')!;
      const row = `waiting for provider until ${clock(Date.parse(String(wait.data.until)))}`;
      // The table is redrawn on each record: the row changes once the provider-wait is drawn.
      const screen = await waitUntil(
        'the row of the waiting task',
        async () => {
          const pane = await tmux(['capture-pane', '-p', '-J']);
          return pane.stdout.includes(row) ? pane.stdout : undefined;
        },
        { timeoutMs: 30_000, everyMs: 100 },
      );
      assert.match(screen, new RegExp(`^limited\\s+${row}\\s+1\\s`, 'm'));
      assert.not.match(screen, /failed \(provider_limited\)/);
    } finally {
      const stop = await runplan(['stop', 'rate-limit', '--wait', '60s'], f);
      assert.is(stop.exitCode, 0, stop.stderr);
      await tmux(['kill-server']);
      dir.cleanup();
    }
  }),
);

// Records as the coordinator journals them (only the fields the fold reads).
function rec(seq: number, type: string, data: Record<string, unknown>): JournalRecord {
  return { seq, prev: '00000000', ts: '2026-11-29T07:55:00.000Z', type, data } as JournalRecord;
}

test('the live table: a task held for the provider says so until its next attempt starts', () => {
  const sink = new SafeOutput(process.stderr);
  const p = new Progress({ stderr: sink, stdout: sink, json: false, table: false, now: () => Date.parse('2026-11-29T07:55:00Z') });
  p.tasks(['t3']);
  p.track(rec(1, 'attempt-started', { taskId: 't3', attempt: 1, ownerTag: 'o', evidenceDir: '/e', worktree: '/w' }));
  p.track(rec(2, 'attempt-closed', { taskId: 't3', attempt: 1, outcome: 'failed', reason: 'provider_limited', class: 'provider' }));
  assert.is(p.rows()[0]!.state, 'failed (provider_limited)');
  p.track(rec(3, 'repair-decided', { taskId: 't3', attempt: 1, class: 'provider', action: 'retry', fingerprint: 'f' }));
  p.track(
    rec(4, 'provider-wait', {
      taskId: 't3',
      attempt: 1,
      reason: 'provider_limited',
      until: '2026-11-29T19:00:00.000Z',
      delayMs: 1,
      source: 'reset',
    }),
  );
  assert.match(p.rows()[0]!.state, /^waiting for provider until (2026-11-29 )?19:00:00 UTC$/);
  p.track(rec(5, 'attempt-started', { taskId: 't3', attempt: 2, ownerTag: 'o', evidenceDir: '/e', worktree: '/w' }));
  assert.is(p.rows()[0]!.state, 'running');
  assert.is(p.view.providerWaits.size, 0);
});

test.run();
