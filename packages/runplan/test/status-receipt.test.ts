// `runplan status` and the receipt read the same journal: for a fresh, a resumed and a
// continued run, status --json shows the receipt's tasks, attempts, usage and cost.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from '@runplan/test-fixtures';
import type { JournalRecord } from '@runplan/journal';
import { collectStatus } from '../src/observe/status.js';
import { mockPlan, records, runIds, runplan, slugDir, withPlan, type Fixture } from './support.js';

// Two tasks in a chain, each reporting usage and a cost; b's gate passes once FLAG exists.
const TALLY = mockPlan({
  slug: 'tally',
  tasks: `[[tasks]]
id = "a"
prompt = """
mock: usage 1000 200 30 4 0.0123
mock: write out/a.txt a
"""
[[tasks]]
id = "b"
needs = ["a"]
prompt = """
mock: usage 500 100 7 0 0.0071
mock: write out/b.txt b
"""
gates = [["mock-gate", "--exists", "FLAG", "0"]]
`,
});

// The receipt of the slug's newest run and its status row, side by side.
async function receiptAndStatus(f: Fixture): Promise<{ receipt: JournalRecord; row: Record<string, unknown> }> {
  const receipt = (await records(f.repo, 'tally')).find((r) => r.terminal === true);
  assert.ok(receipt !== undefined, 'the run has a receipt');
  const status = await runplan(['status', 'tally', '--json'], f);
  assert.is(status.exitCode, 0, status.stderr);
  return { receipt, row: JSON.parse(status.stdout.trim()) as Record<string, unknown> };
}

// The figures both must agree on: tasks done, attempts, usage, cost.
function assertAgree(receipt: JournalRecord, row: Record<string, unknown>, tasks: number): void {
  const d = receipt.data;
  const done = receipt.type === 'run-complete' ? d.tasks : d.tasksDone;
  assert.is(done, tasks, 'the receipt counts every task done (adopted ones too)');
  assert.is(row.tasksDone, done, 'status: tasks done = the receipt');
  assert.is(row.attempts, d.attempts, 'status: attempts = the receipt');
  assert.equal(row.usage, d.usage, 'status: usage = the receipt');
  assert.is(row.costUsd, d.costUsd, 'status: cost = the receipt');
}

// Where the continued run's gate looks for its flag (the plan names it before the repo exists).
const flags = tempDir('runplan-flag-');
test.after(() => flags.cleanup());

test(
  'a fresh run: status --json shows the receipt tasks, attempts, usage and cost',
  withPlan(TALLY, { replacements: { FLAG: '/' } }, async (f) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const { receipt, row } = await receiptAndStatus(f);
    assert.is(row.state, 'complete');
    assertAgree(receipt, row, 2);
  }),
);

test(
  'a resumed run (kill -9 after the first checkpoint, then run): status --json = its receipt',
  withPlan(TALLY, { replacements: { FLAG: '/' } }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:checkpoint' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(runIds(f.repo, 'tally').length, 1, 'resumed, not continued');
    const { receipt, row } = await receiptAndStatus(f);
    assert.is(row.state, 'complete');
    assertAgree(receipt, row, 2);
  }),
);

test(
  'a continued run (b stopped by repair, then --retry b): status --json counts the adopted task and the carried usage and cost, as the receipt does',
  withPlan(TALLY, { replacements: { FLAG: join(flags.path, 'flag') } }, async (f) => {
    const failed = await runplan(['run', f.plan], f);
    assert.is(failed.exitCode, 1, failed.stderr);
    const first = await receiptAndStatus(f);
    assert.is(first.row.state, 'failed');
    assertAgree(first.receipt, first.row, 1);

    writeFileSync(join(flags.path, 'flag'), 'now the gate passes\n');
    try {
      const r = await runplan(['run', f.plan, '--retry', 'b'], f);
      assert.is(r.exitCode, 0, r.stderr);
    } finally {
      rmSync(join(flags.path, 'flag'), { force: true });
    }
    assert.is(runIds(f.repo, 'tally').length, 2, 'a continuation');
    const { receipt, row } = await receiptAndStatus(f);
    assert.is(row.state, 'complete');
    assert.is(row.runs, 2);
    assertAgree(receipt, row, 2);
    // The continuation's totals carry the failed run's spend on top of its own attempt's.
    assert.ok((receipt.data.costUsd as number) > (first.receipt.data.costUsd as number));
  }),
);

test(
  'a coordinator that writes its receipt and exits while status looks is shown complete, never degraded; one that crashes while status looks is degraded, never running (asked before the read and again after it)',
  withPlan('single', {}, async (f) => {
    const run = await runplan(['run', f.plan], f);
    assert.is(run.exitCode, 0, run.stderr);
    const [runId] = runIds(f.repo, 'single');
    const journal = join(slugDir(f.repo, 'single'), runId!, 'journal.jsonl');
    const whole = readFileSync(journal);
    // The journal as it was just before the receipt: every line up to run-complete.
    const lines = whole.toString('utf8').split('\n');
    const receiptAt = lines.findIndex((l) => l.includes('"type":"run-complete"'));
    assert.ok(receiptAt > 0, 'the run has its receipt');
    writeFileSync(journal, `${lines.slice(0, receiptAt).join('\n')}\n`);
    // The coordinator's last moments, played at the liveness check: the receipt is written and
    // the coordinator is gone by the time anyone asks again.
    const rows = await collectStatus(join(f.repo.path, '.git', 'runplan'), 'single', {
      liveness: async () => {
        writeFileSync(journal, whole);
        return undefined;
      },
    });
    assert.is(rows?.[0]?.state, 'complete');
    assert.is(rows?.[0]?.resumeCommand, null);
    // The mirror case: a coordinator live when status asks, gone (crashed) by the time the
    // journal has been read — asked again, it is degraded with the command that resumes it,
    // not shown running for a run nobody drives.
    writeFileSync(journal, `${lines.slice(0, receiptAt).join('\n')}\n`);
    const answers = [{ pid: process.pid, startTime: 1, bootId: 'b', host: 'h', acquiredAt: new Date().toISOString() }, undefined];
    const crashed = await collectStatus(join(f.repo.path, '.git', 'runplan'), 'single', { liveness: async () => answers.shift() });
    assert.is(answers.length, 0, 'asked twice');
    assert.is(crashed?.[0]?.state, 'degraded');
    assert.is(crashed?.[0]?.coordinator, null);
    assert.match(String(crashed?.[0]?.resumeCommand), /^runplan run /);
  }),
);

test(
  'a run whose journal is corrupt after an attempt started: status shows no current task (human and --json), says corrupt with the offset',
  withPlan('single', {}, async (f) => {
    const run = await runplan(['run', f.plan], f);
    assert.is(run.exitCode, 0, run.stderr);
    const [runId] = runIds(f.repo, 'single');
    const journal = join(slugDir(f.repo, 'single'), runId!, 'journal.jsonl');
    // The record after attempt-started fails its checksum: the valid prefix has the attempt open.
    const lines = readFileSync(journal, 'utf8').split('\n');
    const settled = lines.findIndex((l) => l.includes('"type":"command-settled"'));
    assert.ok(settled > 0, 'the run settled its command');
    lines[settled] = lines[settled]!.replace('"type":"command-settled"', '"type":"command-settleX"');
    writeFileSync(journal, lines.join('\n'));
    const json = await runplan(['status', 'single', '--json'], f);
    assert.is(json.exitCode, 0, json.stderr);
    const row = JSON.parse(json.stdout.trim()) as Record<string, unknown>;
    assert.is(row.state, 'corrupt');
    assert.equal(row.current, [], 'no current task in a corrupt run');
    assert.match(String(row.corruption), /^offset \d+, seq \d+: crc_mismatch/);
    assert.match(json.stderr, /^runplan: corrupt: .*journal\.jsonl: offset \d+, seq \d+: crc_mismatch$/m);
    const human = await runplan(['status', 'single'], f);
    assert.is(human.exitCode, 0, human.stderr);
    const [header, body] = human.stdout.trim().split('\n');
    const cells = body!.trim().split(/\s+/);
    const heads = header!.trim().split(/\s+/);
    assert.is(cells[heads.indexOf('STATE')], 'corrupt');
    assert.is(cells[heads.indexOf('CURRENT')], '-', 'the CURRENT cell is empty');
    assert.match(human.stderr, /^runplan: corrupt: .*offset \d+, seq \d+: crc_mismatch$/m);
  }),
);

test.run();
