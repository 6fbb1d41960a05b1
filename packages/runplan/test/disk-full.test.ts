// A full disk is an answer, not a crash (issue 13 §4): every write runplan makes, refused by
// a real small file system (a tmpfs), ends with a documented exit code — a run-failed
// receipt (class environment, disk_full) or exit 5 when the journal itself failed — and the
// next run is let through by the disk itself (min_free), without --retry. The journal's
// injectable file system gives EIO.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentsPath, dispatchCounts, runBin, shFixture, tempDir, withCleanup, withTimeout, type BinResult } from '@runplan/test-fixtures';
import { nodeJournalFs, readJournal, type JournalFs, type JournalRecord } from '@runplan/journal';
import { runPlan } from '../src/coordinator/run-plan.js';
import { ofType, RUNPLAN, runplan, setup, waitForLine, type Fixture } from './support.js';
import { smallFs, type SmallFs } from './small-fs.js';

const MiB = 1024 * 1024;

// The run dirs of a slug under a state root, oldest first.
function runDirs(stateRoot: string, slug: string): string[] {
  const dir = join(stateRoot, slug);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /^\d{8}T\d{6}Z-[0-9a-f]{8}$/.test(n) && existsSync(join(dir, n, 'journal.jsonl')))
    .sort()
    .map((n) => join(dir, n));
}

async function journal(runDir: string): Promise<JournalRecord[]> {
  return (await readJournal(join(runDir, 'journal.jsonl'))).records;
}

function receipt(rs: JournalRecord[]): Record<string, any> | undefined {
  const r = rs.find((x) => x.terminal === true);
  return r === undefined ? undefined : { type: r.type, ...r.data };
}

// What every disk answer shares: its exit code, one clear `runplan: <reason>:` line, no stack trace.
function answered(r: BinResult, code: number, reason: string): void {
  assert.is(r.exitCode, code, `exit ${r.exitCode} (${r.signal ?? 'no signal'}): ${r.stderr}`);
  assert.match(r.stderr, new RegExp(`^runplan: ${reason}: `, 'm'));
  assert.not.match(r.stderr, /^\s+at .+:\d+:\d+\)?$/m, 'no stack trace');
  assert.not.match(r.stderr, /internal_error/);
}

// Pids of live processes whose argv mentions `text` (a fixture's flag file).
function processesNaming(text: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text)) pids.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return pids;
}

interface HeldRun {
  f: Fixture;
  /** The small file system the run's state dir is on. */
  state: SmallFs;
  /** An empty file the plan's fixture holds (or floods) on while it exists. */
  flag: string;
  /** `run <plan> --state-dir <state>`. */
  args: string[];
}

// A test whose runs keep their state on a small file system (`stateBytes`) while the plan's
// fixture holds on a flag file in a scratch dir (`name`): bounded, and all of it removed after.
function withHeldRun(
  timeoutMs: number,
  o: { stateBytes: number; name: string; flag: string; plan: (scratch: string, flag: string) => string },
  body: (t: HeldRun) => Promise<void>,
): () => Promise<void> {
  return withCleanup(
    timeoutMs,
    () => {
      const state = smallFs(o.stateBytes);
      const scratch = tempDir(`runplan-${o.name}-`);
      const flag = join(scratch.path, o.flag);
      writeFileSync(flag, '');
      const f = setup(o.plan(scratch.path, flag));
      return {
        f,
        state,
        flag,
        args: ['run', f.plan, '--state-dir', state.path],
        cleanup: () => {
          rmSync(flag, { force: true });
          f.cleanup();
          scratch.cleanup();
          state.cleanup();
        },
      };
    },
    body,
  );
}

// The top of a plan on main whose attempt dirs are under `scratch`, refused below `minFree`.
function workdirPlanTop(slug: string, minFree: string, scratch: string): string {
  return `slug = "${slug}"
base = "main"
min_free = "${minFree}"
workdir = "${scratch}/w/{{run.id}}.{{task.id}}.{{run.attempt}}"`;
}

test(
  'transcript: ENOSPC in the state dir while the agent floods ends the run (exit 1, disk_full, no hang); refused below min_free; once there is room it continues without --retry',
  withHeldRun(
    120_000,
    {
      stateBytes: 4 * MiB,
      name: 'flood',
      flag: 'flood-now',
      plan: (_, flag) => `slug = "flood"
base = "main"
min_free = "2MiB"
[defaults]
format = "text"
deadline = "2m"
grace = "1s"
[[tasks]]
id = "first"
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
prompt = """
mock: write out/first.txt first
mock: commit first
"""
[[tasks]]
id = "flood"
needs = ["first"]
command = ["${shFixture('flood-while.sh')}", "${flag}"]
expect = "none"
`,
    },
    async ({ f, state, flag, args }) => {
      const full = await runplan(args, f);
      answered(full, 1, 'disk_full');
      assert.match(
        full.stderr,
        /^runplan: disk_full: task flood, phase command, class environment: no space left on device \(ENOSPC\) writing \/.*\/evidence\/flood\.1\/transcript\.txt$/m,
      );
      assert.match(full.stderr, /^ {2}hint: make room on the file system of .*transcript\.txt/m);
      const [first] = runDirs(state.path, 'flood');
      const rs = await journal(first!);
      const r = receipt(rs)!;
      assert.equal([r.type, r.class, r.reason, r.task, r.phase], ['run-failed', 'environment', 'disk_full', 'flood', 'command']);
      assert.is(r.detail.errno, 'ENOSPC');
      assert.match(r.detail.path, /\/evidence\/flood\.1\/transcript\.txt$/);
      assert.is(ofType(rs, 'repair-decided').length, 0, 'the disk failure used up no repair allowance');
      const closed = ofType(rs, 'attempt-closed').find((c) => c.taskId === 'flood')!;
      assert.equal([closed.reason, closed.survivors], ['disk_full', []]);
      assert.equal(processesNaming(flag), [], 'the flooding agent was torn down');

      const refused = await runplan(args, f);
      answered(refused, 3, 'disk_full');
      assert.match(
        refused.stderr,
        /failed for lack of space writing .*transcript\.txt; the file system of .* has [\d.]+ KiB free, below min_free 2\.0 MiB/,
      );
      assert.is(runDirs(state.path, 'flood').length, 1, 'the refusal started nothing');

      // The disk grew, and the flood is over: the same command continues the failed run.
      state.grow(32 * MiB);
      rmSync(flag);
      const again = await runplan(args, f);
      assert.is(again.exitCode, 0, again.stderr);
      const dirs = runDirs(state.path, 'flood');
      assert.is(dirs.length, 2);
      // Run ids have second precision: the new run is the other one, whichever sorts first.
      const rs2 = await journal(dirs.find((d) => d !== first)!);
      assert.is(ofType(rs2, 'run-started')[0]!.continues, first!.split('/').at(-1));
      assert.equal(
        ofType(rs2, 'checkpoint-adopted').map((c) => c.taskId),
        ['first'],
      );
      assert.equal(
        ofType(rs2, 'attempt-started').map((a) => a.taskId),
        ['flood'],
      );
      assert.is(dispatchCounts(f.ledger).get('first'), 1, 'the checkpointed task was not dispatched again');
      assert.is(receipt(rs2)!.type, 'run-complete');
    },
  ),
);

test(
  'journal: ENOSPC on the journal itself exits 5 with one line; refused below min_free; after room the resume journals journal-failed, not a crash, so two earlier crashes do not exhaust the crash cap',
  withHeldRun(
    180_000,
    {
      stateBytes: 4 * MiB,
      name: 'jfail',
      flag: 'hold',
      // Only the journal grows on the state fs while the task holds (its output is already
      // written, stderr stays empty, attempt dirs live elsewhere), and its command-settled
      // record is over 4 KiB, so that append needs a page the full fs does not have.
      plan: (scratch, flag) => `${workdirPlanTop('jfail', '1MiB', scratch)}
[[tasks]]
id = "noisy"
command = ["${shFixture('noisy-then-hold.sh')}", "${flag}"]
format = "claude-stream-json"
expect = "none"
grace = "1s"
`,
    },
    async ({ f, state, flag, args }) => {
      // Two coordinator crashes during the task: the crash cap (2) is reached.
      for (let i = 0; i < 2; i++) {
        const crashed = await runplan(args, { env: { ...f.env, RUNPLAN_FAILPOINT: 'kill-after:attempt-started:noisy' } });
        assert.is(crashed.signal, 'SIGKILL', crashed.stderr);
      }
      const [run] = runDirs(state.path, 'jfail');
      const transcript = join(run!, 'evidence', 'noisy.3', 'transcript.jsonl');
      const running = runBin(RUNPLAN, args, { env: f.env, timeoutMs: 120_000 });
      await waitForLine(transcript, (l) => l.includes('"type":"result"'), 60_000);
      state.fill(0);
      rmSync(flag);
      const failed = await running;
      answered(failed, 5, 'journal_failed');
      assert.match(failed.stderr, /^runplan: journal_failed: .*(ENOSPC|no space left on device)/im);
      assert.is(receipt(await journal(run!)), undefined, 'no receipt: the run is left incomplete');
      const note = JSON.parse(readFileSync(join(run!, 'journal-failed.json'), 'utf8'));
      assert.equal([note.reason, note.errno], ['disk_full', 'ENOSPC']);

      const refused = await runplan(args, f);
      answered(refused, 3, 'disk_full');
      assert.match(refused.stderr, /stopped \(exit 5\) for lack of space writing .*journal\.jsonl; .* below min_free 1\.0 MiB/);

      state.unfill();
      const resumed = await runplan(args, f);
      assert.is(resumed.exitCode, 0, resumed.stderr);
      const rs = await journal(run!);
      const failedWrite = ofType(rs, 'journal-failed');
      assert.is(failedWrite.length, 1);
      assert.equal([failedWrite[0]!.reason, failedWrite[0]!.errno], ['disk_full', 'ENOSPC']);
      assert.equal(
        failedWrite[0]!.attempts.map((a: { attempt: number }) => a.attempt),
        [3],
      );
      assert.is(ofType(rs, 'coordinator-crashed').length, 2, 'only the two real crashes are crashes');
      const closes = ofType(rs, 'attempt-closed').map((c) => `${c.attempt}:${c.reason}`);
      assert.equal(closes, ['1:coordinator_crashed', '2:coordinator_crashed', '3:journal_failed', '4:ok']);
      assert.is(receipt(rs)!.type, 'run-complete');
      assert.not.ok(existsSync(join(run!, 'journal-failed.json')), 'the note is consumed');
      const settled = readFileSync(join(run!, 'journal.jsonl'), 'utf8')
        .split('\n')
        .find((l) => l.includes('"type":"command-settled"'))!;
      assert.ok(Buffer.byteLength(settled) > 4096, `the premise: command-settled is ${Buffer.byteLength(settled)} bytes`);
    },
  ),
);

test(
  'plan copy: a state dir with no room for plan.json refuses (exit 3, disk_full naming it); nothing started',
  withTimeout(60_000, async () => {
    const state = smallFs(1 * MiB);
    const f = setup('single');
    try {
      // One page left: the lock identity takes it, the plan copy finds none.
      state.fill(4096);
      const r = await runplan(['run', f.plan, '--state-dir', state.path], f);
      answered(r, 3, 'disk_full');
      assert.match(
        r.stderr,
        /^runplan: disk_full: no space left on device \(ENOSPC\) writing \/.*\/single\/\d{8}T\d{6}Z-[0-9a-f]{8}\/plan\.json; nothing was started$/m,
      );
      assert.is(runDirs(state.path, 'single').length, 0, 'no journal was created');
      // Nor is the new run's directory left on the full disk, half a plan copy in it.
      assert.equal(
        readdirSync(join(state.path, 'single')).filter((n) => /^\d{8}T\d{6}Z-/.test(n)),
        [],
        'no run directory left',
      );
      assert.not.ok(existsSync(f.ledger), 'nothing was dispatched');
    } finally {
      f.cleanup();
      state.cleanup();
    }
  }),
);

test(
  'evidence: the pre_run log refused by a full state dir: exit 1, disk_full at pre_run.log; refused below min_free; then the run continues',
  withHeldRun(
    120_000,
    {
      stateBytes: 4 * MiB,
      name: 'evidence',
      flag: 'hold',
      plan: (scratch, flag) => `${workdirPlanTop('single', '1MiB', scratch)}
[hooks]
pre_run = ["${shFixture('hold-while.sh')}", "${flag}"]
[[tasks]]
id = "only"
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
prompt = """
mock: write out/only.txt hello
mock: commit only
"""
`,
    },
    async ({ f, state, flag, args }) => {
      const running = runBin(RUNPLAN, args, { env: f.env, timeoutMs: 100_000 });
      const journalFile = await waitForFile(() => runDirs(state.path, 'single')[0], 60_000);
      await waitForLine(join(journalFile, 'journal.jsonl'), (l) => l.includes('"type":"attempt-started"'), 60_000);
      state.fill(0);
      rmSync(flag);
      const r = await running;
      answered(r, 1, 'disk_full');
      const rs = await journal(journalFile);
      const rc = receipt(rs)!;
      assert.equal([rc.class, rc.reason, rc.phase, rc.detail.errno], ['environment', 'disk_full', 'pre_run', 'ENOSPC']);
      assert.match(rc.detail.path, /\/evidence\/only\.1\/pre_run\.log$/);
      assert.is(ofType(rs, 'repair-decided').length, 0);

      const refused = await runplan(args, f);
      answered(refused, 3, 'disk_full');
      state.unfill();
      const again = await runplan(args, f);
      assert.is(again.exitCode, 0, again.stderr);
    },
  ),
);

// Polls (bounded) until `get` returns a value: another process's files.
async function waitForFile(get: () => string | undefined, timeoutMs: number): Promise<string> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const value = get();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`waitForFile: nothing within ${timeoutMs}ms`);
}

// A plan whose attempt dirs are on `workdir`.
function withWorkdir(plan: string, workdir: string, minFree: string, extra: Record<string, string> = {}): Fixture {
  return setup(plan, {
    [`slug = "${plan}"`]: `slug = "${plan}"\nmin_free = "${minFree}"\nworkdir = "${workdir}/{{run.id}}.{{task.id}}.{{run.attempt}}"`,
    ...extra,
  });
}

test(
  "attempt dirs: a full workdir file system refuses the attempt dir's mark: exit 1, disk_full; the rerun is refused until there is room",
  withTimeout(60_000, async () => {
    const work = smallFs(1 * MiB);
    const f = withWorkdir('single', work.path, '512KiB');
    try {
      work.fill(0);
      const r = await runplan(['run', f.plan], f);
      answered(r, 1, 'disk_full');
      assert.match(
        r.stderr,
        /^runplan: disk_full: task only, phase setup, class environment: no space left on device \(ENOSPC\) writing /m,
      );
      const stateRoot = join(f.repo.path, '.git', 'runplan');
      const rc = receipt(await journal(runDirs(stateRoot, 'single')[0]!))!;
      assert.is(rc.detail.path.startsWith(work.path), true, rc.detail.path);
      assert.not.ok(existsSync(f.ledger), 'the agent never started');
      const refused = await runplan(['run', f.plan], f);
      answered(refused, 3, 'disk_full');
      assert.match(refused.stderr, /below min_free 512\.0 KiB/);
      work.unfill();
      const again = await runplan(['run', f.plan], f);
      assert.is(again.exitCode, 0, again.stderr);
    } finally {
      f.cleanup();
      work.cleanup();
    }
  }),
);

test(
  'worktrees: a checkout that does not fit the workdir file system: exit 1, disk_full at the worktree (not worktree_failed, not repaired)',
  withTimeout(60_000, async () => {
    const work = smallFs(1 * MiB);
    const f = withWorkdir('single', work.path, '2MiB');
    try {
      writeFileSync(join(f.repo.path, 'big.bin'), Buffer.alloc(2 * MiB, 7));
      f.repo.git(['add', 'big.bin']);
      f.repo.git(['commit', '-q', '-m', 'a file bigger than the workdir file system']);
      const r = await runplan(['run', f.plan], f);
      answered(r, 1, 'disk_full');
      const stateRoot = join(f.repo.path, '.git', 'runplan');
      const rs = await journal(runDirs(stateRoot, 'single')[0]!);
      const rc = receipt(rs)!;
      assert.equal([rc.class, rc.reason, rc.phase], ['environment', 'disk_full', 'setup']);
      assert.match(rc.detail.path, /\/tree$/);
      assert.is(ofType(rs, 'repair-decided').length, 0);
      const refused = await runplan(['run', f.plan], f);
      answered(refused, 3, 'disk_full');
      assert.not.match(refused.stderr, /repair_stopped|--retry/);
    } finally {
      f.cleanup();
      work.cleanup();
    }
  }),
);

test(
  "git objects: the repository's object store fills while runplan commits the task's result: exit 1, disk_full at .git/objects; refused until there is room",
  withTimeout(60_000, async () => {
    const scratch = tempDir('runplan-objects-');
    const f = setup(`${workdirPlanTop('objects', '2MiB', scratch.path)}
[[tasks]]
id = "big"
command = ["${shFixture('write-random-file.sh')}", "big.bin", "${3 * MiB}"]
format = "text"
`);
    const objects = smallFs(1 * MiB, join(f.repo.path, '.git', 'objects'));
    try {
      const r = await runplan(['run', f.plan], f);
      answered(r, 1, 'disk_full');
      assert.match(
        r.stderr,
        /^runplan: disk_full: task big, phase commit, class environment: no space left on device \(ENOSPC\) writing .*\/\.git\/objects$/m,
      );
      const refused = await runplan(['run', f.plan], f);
      answered(refused, 3, 'disk_full');
      assert.match(refused.stderr, /\.git\/objects has [\d.]+ (KiB|B) free, below min_free 2\.0 MiB/);
    } finally {
      objects.cleanup();
      f.cleanup();
      scratch.cleanup();
    }
  }),
);

test(
  "EIO from the journal's file system (injected): journal_failed, a note with EIO; the resume journals journal-failed (io_error) and completes",
  withTimeout(60_000, async () => {
    const f = setup(`slug = "eio"
base = "main"
[[tasks]]
id = "only"
command = ["${join(agentsPath(), 'mock-agent')}", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
prompt = """
mock: write out/only.txt hello
mock: commit only
"""
`);
    const failing: JournalFs = {
      ...nodeJournalFs,
      write: (fd, buffer, offset, length) =>
        buffer.includes('"type":"command-settled"')
          ? Promise.reject(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }))
          : nodeJournalFs.write(fd, buffer, offset, length),
    };
    const signal = new AbortController().signal;
    try {
      const first = await runPlan({ planFile: f.plan, signal, journalFs: failing });
      assert.is(first.kind, 'journal_failed');
      if (first.kind === 'journal_failed') assert.match(first.message, /EIO/);
      const stateRoot = join(f.repo.path, '.git', 'runplan');
      const [run] = runDirs(stateRoot, 'eio');
      const note = JSON.parse(readFileSync(join(run!, 'journal-failed.json'), 'utf8'));
      assert.equal([note.reason, note.errno], ['io_error', 'EIO']);
      const second = await runPlan({ planFile: f.plan, signal });
      assert.is(second.kind, 'complete');
      const rs = await journal(run!);
      const jf = ofType(rs, 'journal-failed');
      assert.equal(
        jf.map((d) => [d.reason, d.errno]),
        [['io_error', 'EIO']],
      );
      assert.is(ofType(rs, 'coordinator-crashed').length, 0);
      assert.equal(
        ofType(rs, 'attempt-closed').map((c) => `${c.attempt}:${c.reason}`),
        ['1:journal_failed', '2:ok'],
      );
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'a resume whose journal cannot be opened for a full disk (injected ENOSPC): disk_full and the make-room hint, never --fresh',
  withTimeout(60_000, async () => {
    const f = setup(`slug = "enospc"
base = "main"
[[tasks]]
id = "only"
command = ["${join(agentsPath(), 'mock-agent')}", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
prompt = """
mock: write out/only.txt hello
mock: commit only
"""
`);
    const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
    const signal = new AbortController().signal;
    try {
      const first = await runPlan({
        planFile: f.plan,
        signal,
        journalFs: {
          ...nodeJournalFs,
          write: (fd, buffer, offset, length) =>
            buffer.includes('"type":"command-settled"') ? Promise.reject(enospc()) : nodeJournalFs.write(fd, buffer, offset, length),
        },
      });
      assert.is(first.kind, 'journal_failed');
      const second = await runPlan({ planFile: f.plan, signal, journalFs: { ...nodeJournalFs, open: () => Promise.reject(enospc()) } });
      assert.is(second.kind, 'refused');
      if (second.kind !== 'refused') return;
      assert.is(second.reason, 'disk_full', second.message);
      assert.match(second.message, /ENOSPC.*was not resumed; nothing was started/);
      assert.is(second.hint, 'make room on that file system, then run the same command again');
      // With room again, the same command resumes it.
      const third = await runPlan({ planFile: f.plan, signal });
      assert.is(third.kind, 'complete');
    } finally {
      f.cleanup();
    }
  }),
);

test.run();
