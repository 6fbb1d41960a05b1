// Plan keys `ownership` and `cgroup_parent`: a mock agent whose grandchild escapes group +
// tag ownership both ways (`setsid env -i`) is gone after its attempt in cgroup mode, and
// after a coordinator crash (kill -9) and resume, found where attempt-started said.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readLedger, readPids, runBin, tempDir } from '@runplan/test-fixtures';
import { ownCgroupDir } from '@runplan/settle';
import { alive, killAll, ofType, records, RUNPLAN, runplan, waitForLine, waitUntil, withPlan } from './support.js';

const own = ownCgroupDir();
const ownDir = own.ok ? own.value : '';

// A one-task plan whose agent starts an escaped grandchild on attempt 1 (then hangs there
// when `hang`), and commits on every attempt.
function escapePlan(keys: string, hang = false): string {
  return `slug = "escape"
base = "main"
${keys}

[defaults]
command = ["mock-agent", "{{task.id}}", "{{run.attempt}}"]
format = "claude-stream-json"
deadline = "5m"
grace = "1s"

[[tasks]]
id = "escape"
prompt = """
mock: on-attempt 1 escaped-grandchild
${hang ? 'mock: on-attempt 1 sleep 600\n' : ''}mock: write out/escape.txt done
mock: commit escape: done
"""
`;
}

// A test over the escape plan with a MOCK_PIDS file; every grandchild is killed after.
function withEscape(keys: string, hang: boolean, body: (f: Parameters<Parameters<typeof withPlan>[2]>[0], pids: string) => Promise<void>) {
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

test(
  'auto (root): the escaped grandchild is gone after the attempt; attempt-started journals the cgroup parent, command-settled says cgroup',
  withEscape('', false, async (f, pids) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const [grandchild] = readPids(pids);
    assert.ok(grandchild, 'the agent started its grandchild');
    assert.not.ok(alive(grandchild!.pid), 'gone with its attempt');
    const rs = await records(f.repo, 'escape');
    assert.equal(
      ofType(rs, 'attempt-started').map((d) => d.cgroupParent),
      [ownDir],
    );
    assert.equal(
      ofType(rs, 'command-settled').map((d) => d.ownership),
      ['cgroup'],
    );
  }),
);

test(
  'ownership = "group+tag": the same grandchild survives (the documented limit); journaled as group+tag, no cgroup parent',
  withEscape('ownership = "group+tag"', false, async (f, pids) => {
    const r = await runplan(['run', f.plan], f);
    assert.is(r.exitCode, 0, r.stderr);
    const [grandchild] = readPids(pids);
    assert.ok(grandchild);
    assert.ok(alive(grandchild!.pid), 'group + tag cannot find it');
    const rs = await records(f.repo, 'escape');
    assert.equal(
      ofType(rs, 'attempt-started').map((d) => d.cgroupParent),
      [null],
    );
    assert.equal(
      ofType(rs, 'command-settled').map((d) => d.ownership),
      ['group+tag'],
    );
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
  (() => {
    const parent = join(ownDir, `runplan-test-parent-${process.pid}`);
    return withEscape(`cgroup_parent = "${parent}"`, true, async (f, pids) => {
      mkdirSync(parent);
      try {
        let pid = 0;
        const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
        await waitForLine(pids, (l) => /grandchild \d+/.test(l));
        process.kill(pid, 'SIGKILL');
        await running;
        const [grandchild] = readPids(pids);
        assert.ok(alive(grandchild!.pid), 'the crash left the grandchild running');
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
        assert.not.ok(alive(grandchild!.pid), 'ended by the resumed coordinator');
        const crashed = ofType(await records(f.repo, 'escape'), 'coordinator-crashed');
        assert.equal(crashed[0]!.crashed[0].survivors, []);
        assert.equal(
          readdirSync(parent).filter((n) => n.startsWith('settle-')),
          [],
          'and its cgroups removed',
        );
      } finally {
        killAll([...readPids(pids), ...readLedger(f.ledger)].map((p) => p.pid));
        await removeParent(parent);
      }
    });
  })(),
);

test(
  'cgroup_parent, kill -9 of the coordinator: status names the escaped grandchild among the leftovers, and runplan stop ends it there',
  (() => {
    const parent = join(ownDir, `runplan-test-stop-${process.pid}`);
    return withEscape(`cgroup_parent = "${parent}"`, true, async (f, pids) => {
      mkdirSync(parent);
      try {
        let pid = 0;
        const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
        await waitForLine(pids, (l) => /grandchild \d+/.test(l));
        process.kill(pid, 'SIGKILL');
        await running;
        const [grandchild] = readPids(pids);
        assert.ok(alive(grandchild!.pid));
        const status = await runplan(['status', 'escape', '--json'], f);
        assert.is(status.exitCode, 0, status.stderr);
        const row = JSON.parse(status.stdout.trim()) as { leftovers: number[] };
        assert.ok(row.leftovers.includes(grandchild!.pid), `found through its cgroup: ${JSON.stringify(row.leftovers)}`);
        const stop = await runplan(['stop', 'escape'], f);
        assert.is(stop.exitCode, 0, stop.stderr);
        assert.not.ok(alive(grandchild!.pid), 'stop ended it');
        assert.equal(
          readdirSync(parent).filter((n) => n.startsWith('settle-')),
          [],
          'and removed its cgroups',
        );
      } finally {
        killAll([...readPids(pids), ...readLedger(f.ledger)].map((p) => p.pid));
        await removeParent(parent);
      }
    });
  })(),
);

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
