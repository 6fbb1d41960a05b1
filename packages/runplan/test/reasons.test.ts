import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { classified, FAILURE_CLASSES, FAILURE_REASONS, isFailureReason, REASON_CLASS } from '../src/events/reasons.js';
import { failureOf } from '../src/events/failure.js';
import { classifyCommand, classifyGate } from '../src/repair/index.js';
import { commandMessage } from '../src/attempt/command-failure.js';

// The reason table below the bin: one class per reason, every reason and class documented.

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

// The README's reason table: reason → class, as written.
function documented(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const m of README.matchAll(/^\| `([a-z_]+)` \| `([a-z_]+)` \|/gm)) {
    assert.not.ok(rows.has(m[1]!), `README lists ${m[1]} twice`);
    rows.set(m[1]!, m[2]!);
  }
  return rows;
}

test('every reason has exactly one class, and it is one of the classes', () => {
  assert.ok(FAILURE_REASONS.length >= 40);
  assert.is(new Set(FAILURE_REASONS).size, FAILURE_REASONS.length);
  for (const reason of FAILURE_REASONS) {
    assert.match(reason, /^[a-z]+(_[a-z]+)*$/, `${reason} is a snake_case slug`);
    assert.ok(FAILURE_CLASSES.includes(REASON_CLASS[reason]), reason);
    assert.equal(classified(reason), { class: REASON_CLASS[reason], reason });
    assert.is(failureOf(reason, 'run', 'm').class, REASON_CLASS[reason]);
  }
  assert.ok(isFailureReason('gate_failed'));
  assert.not.ok(isFailureReason('repeated_failure'), 'repair keeps the class of the failure it repeats');
  assert.not.ok(isFailureReason('toString'));
});

test('the README documents every reason with its class, and nothing else', () => {
  const rows = documented();
  assert.equal([...rows.keys()].sort(), [...FAILURE_REASONS].sort());
  for (const reason of FAILURE_REASONS) assert.is(rows.get(reason), REASON_CLASS[reason], reason);
  for (const cls of FAILURE_CLASSES) assert.ok(README.includes(`\`${cls}\``), `README names class ${cls}`);
});

test('decided: branch_moved is integration, commit_failed is task, wherever they are found', () => {
  assert.is(REASON_CLASS.branch_moved, 'integration');
  assert.is(REASON_CLASS.commit_failed, 'task');
  assert.is(REASON_CLASS.rebase_failed, 'environment');
});

test('classifyCommand and classifyGate answer from the table', () => {
  const task = { repair: { providerExitCodes: [] } };
  for (const reason of ['interrupted', 'spawn_failed', 'timed_out', 'stalled', 'signaled', 'exited'] as const) {
    const c = classifyCommand({ reason, exitCode: reason === 'exited' ? 1 : null }, undefined, task);
    assert.is(c?.class, REASON_CLASS[c!.reason], reason);
    const g = classifyGate({ reason, exitCode: reason === 'exited' ? 1 : null });
    assert.is(g?.class, REASON_CLASS[g!.reason], reason);
  }
});

test('every way a command fails has its own message', () => {
  const execution = { exitCode: 3, signal: 'SIGKILL', deadlineMs: 1000 } as never;
  const s = { execution, state: undefined, error: null };
  const task = { deadlineMs: 1000, stallMs: 500 };
  const reasons = [
    'interrupted',
    'spawn_failed',
    'blocked',
    'provider_limited',
    'timed_out',
    'stalled',
    'agent_error',
    'signaled',
    'exited',
  ] as const;
  const messages = reasons.map((r) => commandMessage(r, s, task));
  assert.is(new Set(messages).size, reasons.length);
  assert.is(commandMessage('exited', s, task), 'the command exited 3');
  assert.is(commandMessage('signaled', s, task), 'the command was killed by SIGKILL');
});

test.run();
