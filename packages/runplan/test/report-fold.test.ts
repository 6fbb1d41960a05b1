import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { agentsPath } from '@runplan/test-fixtures';
import { runPlan } from '../src/coordinator/run-plan.js';
import type { RunEnd } from '../src/coordinator/types.js';
import { writeRunReport } from '../src/observe/report.js';
import { runIds, runplan, slugDir, withPlan } from './support.js';

// The report written at the receipt comes from the run's journal folded in memory as the
// coordinator wrote it (RunEnd.view), not from reading the journal back: it must be the
// report a read of the journal gives, byte for byte — for a resume (the fold its decision
// read, this coordinator's records on top) and for a new run (its header read back). When
// the coordinator did not see every record (the resume's writer repaired a torn tail) there
// is no view and the report reads the journal.

const mock = join(agentsPath(), 'mock-agent');
const PLAN = `slug = "folded"
base = "main"

[budget]
max_tokens = 1000000

${['a', 'b', 'c']
  .map(
    (id, i) => `[[tasks]]
id = "${id}"
${i > 0 ? `needs = ["${['a', 'b'][i - 1]}"]\n` : ''}command = ["${mock}", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
prompt = """
mock: write out/${id}.txt ${id}
mock: commit ${id}
"""
`,
  )
  .join('\n')}`;

// A report's HTML without its per-page CSP nonce (random on every write).
const unnonced = (html: string): string => html.replace(/nonce(-|=")[A-Za-z0-9+/=]+/g, 'nonce$1N');

// The run's report from its in-memory view (and the plan copy's facts from the plan) and
// from its journal (and plan copy), as written at the receipt.
async function bothReports(end: RunEnd): Promise<{ folded: string; read: string }> {
  if (end.kind !== 'complete' && end.kind !== 'failed') throw new Error(`the run ended ${end.kind}`);
  const file = await writeRunReport(end.journal, end.view, end.planCopy);
  assert.ok(file !== undefined, 'the report from the fold is written');
  const folded = unnonced(readFileSync(file!, 'utf8'));
  assert.is(await writeRunReport(end.journal), file);
  return { folded, read: unnonced(readFileSync(file!, 'utf8')) };
}

test(
  'the report at the receipt of a resume and of a new run is folded in memory and equals the report read from the journal',
  withPlan(PLAN, { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:attempt-started:b' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const signal = new AbortController().signal;
    const resumed = await runPlan({ planFile: f.plan, signal });
    assert.is(resumed.kind, 'complete');
    assert.ok(resumed.kind === 'complete' && resumed.view !== undefined, 'the resume hands its fold to the report');
    assert.is(resumed.view?.terminal?.type, 'run-complete');
    assert.ok(resumed.kind === 'complete' && resumed.planCopy !== undefined, 'no secret: the plan copy facts come from the plan');
    const a = await bothReports(resumed);
    assert.ok(a.folded.includes('"needs":["a"]'), 'the needs are in the report');
    assert.ok(a.folded.includes('"maxTokens":1000000'), 'the budget is in the report');
    assert.ok(a.folded.includes('coordinator-crashed'), 'the crash before the resume is in the fold');
    assert.is(a.folded, a.read);

    const fresh = await runPlan({ planFile: f.plan, signal, newRun: true });
    assert.is(fresh.kind, 'complete');
    assert.ok(fresh.kind === 'complete' && fresh.view !== undefined, 'a new run hands its fold to the report');
    assert.is(fresh.view?.createdAt !== undefined, true, 'the header read back is folded');
    const b = await bothReports(fresh);
    assert.is(b.folded, b.read);
    assert.is(runIds(f.repo, 'folded').length, 2);
  }),
);

test(
  'a resume whose writer repaired a torn tail has no fold for the report (a record it did not see): the report reads the journal',
  withPlan(PLAN, { timeoutMs: 120_000 }, async (f) => {
    const crashed = await runplan(['run', f.plan], { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:attempt-started:b' } });
    assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
    const [id] = runIds(f.repo, 'folded');
    const journal = join(slugDir(f.repo, 'folded'), id!, 'journal.jsonl');
    appendFileSync(journal, '0123abcd {"seq":99,"prev":"tor');
    const resumed = await runPlan({ planFile: f.plan, signal: new AbortController().signal });
    assert.is(resumed.kind, 'complete');
    assert.ok(resumed.kind === 'complete' && resumed.view === undefined, 'no fold: the repair note was not seen');
    assert.match(readFileSync(journal, 'utf8'), /"type":"journal-repaired"/);
    const r = await bothReports(resumed);
    assert.is(r.folded, r.read);
  }),
);

test(
  'a plan with a secret masked in its plan copy hands the report no plan copy facts: the report reads the copy, and equals the one read from the journal',
  withPlan(
    PLAN.replace('[budget]', 'secret_env = ["TOKEN"]\n\n[budget]').replace(
      'format = "claude-stream-json"',
      'format = "claude-stream-json"\nenv = { TOKEN = "s3cret-a" }',
    ),
    { timeoutMs: 120_000 },
    async (f) => {
      const end = await runPlan({ planFile: f.plan, signal: new AbortController().signal });
      assert.is(end.kind, 'complete');
      assert.ok(end.kind === 'complete' && end.planCopy === undefined, 'a masked copy: no facts from the plan');
      const r = await bothReports(end);
      assert.ok(r.read.includes('"needs":["a"]'));
      assert.is(r.folded, r.read);
    },
  ),
);

test.run();
