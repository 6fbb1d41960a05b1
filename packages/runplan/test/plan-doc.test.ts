import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, withTimeout } from '@runplan/test-fixtures';
import { BUDGET_KEYS, HOOK_KEYS, TOP_KEYS } from '../src/plan/load.js';
import { DEFAULT_KEYS, REPAIR_KEYS } from '../src/plan/task-keys.js';
import { TASK_KEYS } from '../src/plan/tasks.js';
import { EXECUTOR_KEYS } from '../src/executor/plan-keys.js';
import { RUNPLAN } from './support.js';

// packages/runplan, from dist/test.
const PKG = join(import.meta.dirname, '..', '..');
const planDoc = () => readFileSync(join(PKG, 'PLAN.md'), 'utf8');

// The key names PLAN.md documents: the first cell of each table row, in backquotes.
function documentedKeys(doc: string): Set<string> {
  const keys = new Set<string>();
  const keyTables = doc.slice(0, doc.indexOf('<!-- exit-codes'));
  for (const m of keyTables.matchAll(/^\| `([a-z_.]+)` \|/gm)) keys.add(m[1]!);
  return keys;
}

test('PLAN.md documents every key the plan reader accepts, at each level', () => {
  const documented = documentedKeys(planDoc());
  const accepted = [
    ...TOP_KEYS,
    ...HOOK_KEYS.map((k) => `hooks.${k}`),
    ...BUDGET_KEYS.map((k) => `budget.${k}`),
    ...REPAIR_KEYS.map((k) => `repair.${k}`),
    ...EXECUTOR_KEYS.map((k) => `executor.${k}`),
    ...new Set([...TASK_KEYS, ...DEFAULT_KEYS]),
  ];
  const missing = accepted.filter((k) => !documented.has(k));
  assert.equal(missing, [], `keys the reader accepts that PLAN.md does not document: ${missing.join(', ')}`);
  // And nothing documented that the reader would refuse as unknown_key.
  const known = new Set(accepted);
  assert.equal(
    [...documented].filter((k) => !known.has(k)),
    [],
  );
});

// The exit codes each command names in one text: every standalone integer in its part.
function codes(text: string): number[] {
  return [...new Set([...text.matchAll(/(?<![\w.-])(\d{1,3})(?![\w.])/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
}

// `runplan --help`'s exit-code block, per command (a line naming it, then its indented continuation).
function helpCodes(help: string): Map<string, number[]> {
  const block = help.slice(help.indexOf('Exit codes:') + 'Exit codes:'.length).split('\n');
  const parts = new Map<string, string>();
  let current = '';
  for (const line of block) {
    // The command is everything before the first code: `run, demo`, `gate claude --install`.
    const named = /^ {2}(\S[^0-9]*?)\s+(\d.*)$/.exec(line);
    if (named && !line.startsWith('    ')) {
      current = named[1]!.trim();
      parts.set(current, named[2]!);
    } else if (current !== '' && line.trim() !== '') parts.set(current, `${parts.get(current)!} ${line.trim()}`);
  }
  return new Map([...parts].map(([k, v]) => [k, codes(v)]));
}

// PLAN.md's exit-code table, per command.
function planCodes(doc: string): Map<string, number[]> {
  const table = doc.slice(doc.indexOf('<!-- exit-codes'));
  const out = new Map<string, number[]>();
  for (const m of table.matchAll(/^\| (`[^|]+`) \| ([^|]+) \|$/gm)) {
    if (m[1] === '`command`') continue;
    out.set(m[1]!.replace(/`/g, ''), codes(m[2]!.replace(/`/g, '')));
  }
  return out;
}

// The README's "Exit…" paragraph in a command's section.
function readmeCodes(readme: string, heading: string): number[] {
  const from = readme.slice(readme.indexOf(`### \`runplan ${heading}`));
  const section = from.slice(0, from.indexOf('\n### ', 4));
  const start = section.search(/Exit (codes: )?`?0/);
  const end = section.indexOf('\n\n', start);
  const paragraph = section.slice(start, end === -1 ? undefined : end);
  return codes(paragraph.replace(/\(`teardown_failed`[^)]*\)/, ''));
}

test(
  'the exit codes in `runplan --help`, the README and PLAN.md agree',
  withTimeout(30_000, async () => {
    const help = await runBin(RUNPLAN, ['--help'], { timeoutMs: 25_000 });
    assert.is(help.exitCode, 0, help.stderr);
    const fromHelp = helpCodes(help.stdout);
    const fromPlan = planCodes(planDoc());
    assert.equal([...fromPlan.keys()].sort(), [...fromHelp.keys()].sort());
    for (const [command, list] of fromHelp) assert.equal(fromPlan.get(command), list, `${command}: PLAN.md vs --help`);
    const readme = readFileSync(join(PKG, 'README.md'), 'utf8');
    for (const [heading, command] of [
      ['run PLAN', 'run, demo'],
      ['validate PLAN', 'validate'],
      ['status', 'status'],
      ['log', 'log'],
      ['report', 'report'],
      ['stop SLUG', 'stop'],
    ] as const) {
      assert.equal(readmeCodes(readme, heading), fromHelp.get(command), `${command}: README vs --help`);
    }
    assert.match(readme, /\(PLAN\.md\)/, 'the README links PLAN.md');
  }),
);

test.run();
