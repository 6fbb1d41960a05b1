// The coordinator refuses to be a background job of an interactive shell, in a real terminal:
// `script` (util-linux) gives a job-control shell a pty, as a person's prompt would.
import { execFileSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, runBin } from '@runplan/test-fixtures';
import { isBackgroundJob, parseStat } from '../src/coordinator/foreground.js';
import { ofType, records, RUNPLAN, runIds, withPlan, type Fixture } from './support.js';

// `script` must be there (bsdutils is Essential on Debian); where it is not, install it or fail — never skip.
function scriptBin(): string {
  const which = () => {
    try {
      return execFileSync('sh', ['-c', 'command -v script'], { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  if (which() === '') execFileSync('sh', ['-c', 'apt-get install -y bsdutils util-linux >/dev/null 2>&1 || true']);
  const found = which();
  assert.ok(found !== '', 'script (util-linux/bsdutils) is needed for the terminal tests and could not be installed');
  return found;
}

const SCRIPT = scriptBin();

function sq(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

// Runs `line` in a job-control bash on a pseudo-terminal; what it printed, with `rc=N` lines.
async function inTerminal(f: Fixture, line: string) {
  const bash = `bash --norc --noprofile -c ${sq(`set -m; ${line}`)}`;
  const r = await runBin(SCRIPT, ['-qec', bash, '/dev/null'], { env: f.env, cwd: f.repo.path, timeoutMs: 100_000 });
  return r.stdout.replace(/\r/g, '');
}

const RUN = (f: Fixture, extra = '') => `${sq(process.execPath)} ${sq(RUNPLAN)} run ${sq(f.plan)}${extra}`;

test(
  '`runplan run plan.toml &` at a prompt refuses: exit 3, background_launch, nothing dispatched',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const out = await inTerminal(f, `${RUN(f)} & wait $!; echo rc=$?`);
    assert.match(out, /rc=3\n/, out);
    assert.match(out, /runplan: background_launch: runplan run must not be a background job .*nothing was started/);
    assert.match(out, /hint: run it in the foreground \(no `&`\)/);
    assert.equal(readLedger(f.ledger), [], 'no agent was started');
    assert.equal(runIds(f.repo, 'single'), [], 'no run was created');
  }),
);

test(
  'the same command in the foreground runs, and so does `timeout 60 runplan run` (runplan in timeout’s group)',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const fg = await inTerminal(f, `${RUN(f)}; echo rc=$?`);
    assert.match(fg, /rc=0\n/, fg);
    const timed = await inTerminal(f, `timeout 60 ${RUN(f, ' --fresh')}; echo rc=$?`);
    assert.match(timed, /rc=0\n/, timed);
    assert.is(runIds(f.repo, 'single').length, 2);
    assert.not.ok('allowBackground' in ofType(await records(f.repo, 'single'), 'run-started')[0]!);
  }),
);

test(
  '--allow-background starts the background job anyway and journals that it was allowed',
  withPlan('single', { timeoutMs: 120_000 }, async (f) => {
    const out = await inTerminal(f, `${RUN(f, ' --allow-background')} & wait $!; echo rc=$?`);
    assert.match(out, /rc=0\n/, out);
    assert.is(ofType(await records(f.repo, 'single'), 'run-started')[0]!.allowBackground, true);
  }),
);

test('the sign read from /proc/<pid>/stat: leader of a group that is not the foreground one, with a terminal', () => {
  const line = (pid: number, pgrp: number, tty: number, tpgid: number) => `${pid} (node (x) y) S 1 ${pgrp} 1 ${tty} ${tpgid} 4194304 0`;
  assert.equal(parseStat(line(10, 10, 34816, 9)), { pid: 10, pgrp: 10, ttyNr: 34816, tpgid: 9 });
  assert.ok(isBackgroundJob(parseStat(line(10, 10, 34816, 9))!), 'a background job');
  assert.not.ok(isBackgroundJob(parseStat(line(10, 10, 34816, 10))!), 'the foreground job');
  assert.not.ok(isBackgroundJob(parseStat(line(10, 9, 34816, 8))!), 'inside a wrapper’s group (timeout, settle)');
  assert.not.ok(isBackgroundJob(parseStat(line(10, 10, 0, -1))!), 'no terminal (CI, a daemon manager)');
  assert.is(parseStat('garbage'), undefined);
});

test.run();
