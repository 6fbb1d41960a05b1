// Plan keys `ownership` and `cgroup_parent`: a mock agent whose grandchild escapes group +
// tag ownership both ways (`setsid env -i`) is gone after its attempt in cgroup mode, and
// after a coordinator crash (kill -9) and resume, found where attempt-started said.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, readPids, tempDir } from '@runplan/test-fixtures';
import { ownCgroupDir } from '@runplan/settle';
import {
  alive,
  crashOnceGrandchildRuns,
  killAll,
  mockPlan,
  ofType,
  records,
  runplan,
  waitUntil,
  withPlan,
  type Fixture,
} from './support.js';

const own = ownCgroupDir();
const ownDir = own.ok ? own.value : '';

// A one-task plan whose agent starts an escaped grandchild on attempt 1 (then hangs there
// when `hang`), and commits on every attempt.
function escapePlan(keys: string, hang = false): string {
  return mockPlan({
    slug: 'escape',
    top: [keys],
    defaults: ['deadline = "5m"', 'grace = "1s"'],
    tasks: `[[tasks]]
id = "escape"
prompt = """
mock: on-attempt 1 escaped-grandchild
${hang ? 'mock: on-attempt 1 sleep 600\n' : ''}mock: write out/escape.txt done
mock: commit escape: done
"""
`,
  });
}

// A test over the escape plan with a MOCK_PIDS file; every grandchild is killed after.
function withEscape(keys: string, hang: boolean, body: (f: Fixture, pids: string) => Promise<void>) {
  const scratch = tempDir('runplan-escape-');
  const pids = join(scratch.path, 'pids');
  return withPlan(escapePlan(keys, hang), { env: { MOCK_PIDS: pids }, timeoutMs: 120_000 }, async (f) => {
    try {
      await body(f, pids);
    } finally {
      killAll(readPids(pids).map((p) => p.pid));
      scratch.cleanup();
    }
  });
}

test('the machine can make cgroups (what the tests below prove is cgroup mode, not its fallback)', () => {
  assert.ok(own.ok, 'our cgroup v2 directory is found');
});

// Runs the escape plan to success: its grandchild's pid, and the cgroup parent and ownership
// its attempt journaled.
async function escapeRun(f: Fixture, pids: string): Promise<{ pid: number; cgroupParents: unknown[]; ownerships: unknown[] }> {
  const r = await runplan(['run', f.plan], f);
  assert.is(r.exitCode, 0, r.stderr);
  const [grandchild] = readPids(pids);
  assert.ok(grandchild, 'the agent started its grandchild');
  const rs = await records(f.repo, 'escape');
  return {
    pid: grandchild.pid,
    cgroupParents: ofType(rs, 'attempt-started').map((d) => d.cgroupParent),
    ownerships: ofType(rs, 'command-settled').map((d) => d.ownership),
  };
}

test(
  'auto (root): the escaped grandchild is gone after the attempt; attempt-started journals the cgroup parent, command-settled says cgroup',
  withEscape('', false, async (f, pids) => {
    const run = await escapeRun(f, pids);
    assert.not.ok(alive(run.pid), 'gone with its attempt');
    assert.equal(run.cgroupParents, [ownDir]);
    assert.equal(run.ownerships, ['cgroup']);
  }),
);

test(
  'ownership = "group+tag": the same grandchild survives (the documented limit); journaled as group+tag, no cgroup parent',
  withEscape('ownership = "group+tag"', false, async (f, pids) => {
    const run = await escapeRun(f, pids);
    assert.ok(alive(run.pid), 'group + tag cannot find it');
    assert.equal(run.cgroupParents, [null]);
    assert.equal(run.ownerships, ['group+tag']);
  }),
);

test(
  'an ownership that is not auto, cgroup or group+tag is an invalid plan (exit 2, naming the key); nothing runs',
  withEscape('ownership = "systemd"', false, async (f, pids) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /ownership.*"systemd" is not one of auto, cgroup, group\+tag/);
    assert.equal(readPids(pids), []);
  }),
);

test(
  'ownership = "cgroup" with a cgroup_parent that is no cgroup: the command fails to start, naming why',
  withEscape('ownership = "cgroup"\ncgroup_parent = "."', false, async (f, pids) => {
    const r = await runplan(['run', f.plan], f);
    assert.is.not(r.exitCode, 0);
    assert.equal(readPids(pids), [], 'the agent never ran');
    const settled = ofType(await records(f.repo, 'escape'), 'command-settled');
    assert.ok(settled.length > 0);
    assert.is(settled[0]!.reason, 'spawn_failed');
    assert.match(String(settled[0]!.error), /cgroup_parent_invalid: .*is not a cgroup v2 directory/);
  }),
);

test(
  'cgroup_parent, then kill -9 of the coordinator while the agent hangs: the resumed coordinator ends the escaped grandchild in the journaled parent',
  withCrashedEscape('parent', async (f, parent, grandchild) => {
    assert.ok(
      readdirSync(parent).some((n) => n.startsWith('settle-')),
      'its cgroup is in the configured parent',
    );
    const started = ofType(await records(f.repo, 'escape'), 'attempt-started');
    assert.equal(
      started.map((d) => d.cgroupParent),
      [parent],
    );
    // The resumed coordinator's plan no longer names the parent: only the journal does.
    writeFileSync(f.plan, escapePlan('', true));
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    assert.not.ok(alive(grandchild), 'ended by the resumed coordinator');
    const crashed = ofType(await records(f.repo, 'escape'), 'coordinator-crashed');
    assert.equal(crashed[0]!.crashed[0].survivors, []);
    assert.equal(
      readdirSync(parent).filter((n) => n.startsWith('settle-')),
      [],
      'and its cgroups removed',
    );
  }),
);

test(
  'cgroup_parent, kill -9 of the coordinator: status names the escaped grandchild among the leftovers, and runplan stop ends it there',
  withCrashedEscape('stop', async (f, parent, grandchild) => {
    const status = await runplan(['status', 'escape', '--json'], f);
    assert.is(status.exitCode, 0, status.stderr);
    const row = JSON.parse(status.stdout.trim()) as { leftovers: number[] };
    assert.ok(row.leftovers.includes(grandchild), `found through its cgroup: ${JSON.stringify(row.leftovers)}`);
    const stop = await runplan(['stop', 'escape'], f);
    assert.is(stop.exitCode, 0, stop.stderr);
    assert.not.ok(alive(grandchild), 'stop ended it');
    assert.equal(
      readdirSync(parent).filter((n) => n.startsWith('settle-')),
      [],
      'and removed its cgroups',
    );
  }),
);

// A test over the hanging escape plan with `cgroup_parent` a fresh cgroup (runplan-test-<name>-<pid>):
// its coordinator is killed (kill -9) once the escaped grandchild runs, and the body gets the
// parent and that grandchild (still alive: checked). After it every process is killed, the parent removed.
function withCrashedEscape(name: string, body: (f: Fixture, parent: string, grandchild: number) => Promise<void>) {
  const parent = join(ownDir, `runplan-test-${name}-${process.pid}`);
  return withEscape(`cgroup_parent = "${parent}"`, true, async (f, pids) => {
    mkdirSync(parent);
    try {
      await crashOnceGrandchildRuns(f, pids);
      const [grandchild] = readPids(pids);
      assert.ok(alive(grandchild!.pid), 'the crash left the grandchild running');
      await body(f, parent, grandchild!.pid);
    } finally {
      killAll([...readPids(pids), ...readLedger(f.ledger)].map((p) => p.pid));
      await removeParent(parent);
    }
  });
}

// Removes a test's cgroup parent, ending whatever a failed test left in its cgroups first.
async function removeParent(parent: string): Promise<void> {
  if (!existsSync(parent)) return;
  for (const name of readdirSync(parent).filter((n) => n.startsWith('settle-'))) {
    const cgroup = join(parent, name);
    writeFileSync(join(cgroup, 'cgroup.kill'), '1');
    await waitUntil(`${cgroup} empty`, () => readFileSync(join(cgroup, 'cgroup.events'), 'utf8').includes('populated 0'), {
      timeoutMs: 5000,
      everyMs: 10,
    });
    rmdirSync(cgroup);
  }
  rmdirSync(parent);
}

test.run();
