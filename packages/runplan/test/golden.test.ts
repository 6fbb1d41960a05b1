// The behaviour baseline of the core: what the coordinator journals for the bundled demo
// (13 tasks) and for a crash-and-resume of it, normalised to the sequence of event types
// and the key set of each record's data (ts, ids, paths and durations dropped). A refactor
// that changes what is journaled fails here. Regenerate on purpose only:
//   UPDATE_GOLDEN=1 node packages/runplan/dist/test/golden.test.js
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fixture, parseJsonLines, runBin, withTimeout } from '@runplan/test-fixtures';
import { readJournal, type JournalRecord } from '@runplan/journal';
import { journalPath, RUNPLAN, runplan, waitForLine, withPlan } from './support.js';

/** One record as the baseline keeps it. */
interface Shape {
  type: string;
  task: string | null;
  keys: string[];
  terminal?: true;
}

function shapeOf(r: JournalRecord): Shape {
  const d = r.data;
  return {
    type: r.type,
    task: typeof d.taskId === 'string' ? d.taskId : null,
    keys: Object.keys(d).sort(),
    ...(r.terminal ? { terminal: true as const } : {}),
  };
}

// The per-task subsequences and the run-level one: what an interleaving of parallel tasks keeps.
function byTask(shapes: Shape[]): Record<string, Shape[]> {
  const out: Record<string, Shape[]> = {};
  for (const s of shapes) (out[s.task ?? '(run)'] ??= []).push(s);
  return out;
}

// Compares with the stored baseline (or writes it when UPDATE_GOLDEN=1).
function matchesGolden(name: string, actual: unknown): void {
  const file = fixture(`golden/${name}.json`);
  const text = JSON.stringify(actual, null, 1) + '\n';
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return;
  }
  assert.ok(existsSync(file), `no baseline ${file}: run with UPDATE_GOLDEN=1 once`);
  assert.equal(actual, JSON.parse(readFileSync(file, 'utf8')), `${name}: the journal differs from the baseline`);
}

// `runplan demo ARGS --json`: the records it printed; its scratch directory (the repository's
// parent, runplan-demo-XXXXXX) removed after.
async function demo(args: string[]): Promise<JournalRecord[]> {
  const r = await runBin(RUNPLAN, ['demo', '--json', ...args], { timeoutMs: 170_000 });
  const scratch = /scratch repository (\S+)/.exec(r.stderr)?.[1];
  if (scratch !== undefined)
    rmSync(basename(dirname(scratch)).startsWith('runplan-demo-') ? dirname(scratch) : scratch, { recursive: true, force: true });
  assert.is(r.exitCode, 0, r.stderr);
  return parseJsonLines(r.stdout) as JournalRecord[];
}

test(
  'runplan demo --json --jobs 1 journals the baseline sequence',
  withTimeout(180_000, async () => {
    matchesGolden('demo-jobs1', (await demo(['--jobs', '1'])).map(shapeOf));
  }),
);

test(
  'runplan demo --json --jobs 3: each task and the run journal the baseline subsequences',
  withTimeout(180_000, async () => {
    // Whether a task is rebased (and its gates re-run, phase integrate) depends on timing.
    const records = (await demo(['--jobs', '3'])).filter((r) => !(r.type === 'gates-done' && r.data.phase === 'integrate'));
    matchesGolden('demo-jobs3', byTask(records.map(shapeOf)));
  }),
);

test(
  'the 13-task crash-and-resume (kill -9 while t07 runs, then resume) journals the baseline sequence',
  withPlan('thirteen', { timeoutMs: 180_000, env: { MOCK_HOLD: 't07:1', MOCK_HOLD_SECONDS: '120' } }, async (f) => {
    let pid = 0;
    const running = runBin(RUNPLAN, ['run', f.plan, '--jobs', '1'], { env: f.env, timeoutMs: 170_000, onSpawn: (p) => (pid = p) });
    await waitForLine(f.ledger, (l) => l.startsWith('t07 '), 150_000);
    const journal = journalPath(f.repo, 'thirteen');
    // t07 holds once its first output line is saved; then the coordinator dies.
    await waitForLine(journal, (l) => l.includes('"type":"attempt-started"') && l.includes('"taskId":"t07"'));
    const started = (await readJournal(journal)).records.find((r) => r.type === 'attempt-started' && r.data.taskId === 't07')!;
    await waitForLine(`${String(started.data.evidenceDir)}/transcript.jsonl`, (l) => l.includes('"init"'));
    process.kill(pid, 'SIGKILL');
    await running;
    const r = await runplan(['run', f.plan, '--jobs', '1'], f, 170_000);
    assert.is(r.exitCode, 0, r.stderr);
    matchesGolden('thirteen-crash-resume', (await readJournal(journal)).records.map(shapeOf));
  }),
);

test.run();
