import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir, withTimeout } from '@runplan/test-fixtures';
import { capture, findTagged, newOwnerTag, ownCgroupDir, teardownByTag, type SettleEvent } from '../src/index.js';
import { alive, killQuietly, pidsIn, settleBin, sh } from './support.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const own = ownCgroupDir();
const ownDir = own.ok ? own.value : '';

test('this machine can make cgroups (the tests below prove cgroup mode, not its fallback)', () => {
  assert.ok(own.ok, 'our cgroup v2 directory is found through /proc/self/mountinfo');
  assert.ok(existsSync(join(ownDir, 'cgroup.procs')));
});

test(
  'cgroup mode: a grandchild that left the group and scrubbed its environment is dead when capture returns, its cgroup removed',
  withTimeout(30_000, async () => {
    const events: SettleEvent[] = [];
    const r = await capture({ argv: [sh('escape-both.sh')], ownership: 'cgroup', graceMs: 300, onEvent: (e) => events.push(e) });
    const [sleeper] = pidsIn(r.stdout);
    try {
      assert.ok(sleeper, 'the fixture printed the escaped sleeper');
      assert.is(r.ownership, 'cgroup');
      assert.is(r.ownershipFallback, undefined);
      assert.ok(r.cgroup?.startsWith(`${ownDir}/settle-`), 'made in our own cgroup’s directory, named from the tag');
      assert.ok(r.cgroup?.endsWith(r.tag));
      assert.is(r.reason, 'exited');
      assert.is(r.exitCode, 0);
      assert.not.ok(alive(sleeper!), 'the sleeper is dead (a zombie counts as dead)');
      assert.ok(r.teardown.signalled.includes(sleeper!), 'ended as a leftover');
      assert.is(r.teardown.result, 'clean');
      assert.not.ok(existsSync(r.cgroup!), 'the cgroup is gone');
      const ownership = events.find((e) => e.type === 'ownership');
      assert.equal(ownership, { type: 'ownership', ownership: 'cgroup', cgroup: r.cgroup });
      assert.ok(
        events.findIndex((e) => e.type === 'ownership') < events.findIndex((e) => e.type === 'spawned'),
        'said before the spawned event',
      );
    } finally {
      killQuietly(sleeper);
    }
  }),
);

test(
  'group+tag mode: the README’s documented limit — the same grandchild survives settle',
  withTimeout(30_000, async () => {
    assert.match(readme, 'a descendant that both scrubs its environment and leaves the process group');
    assert.match(readme, '`setsid env -i …`) cannot be found');
    const r = await capture({ argv: [sh('escape-both.sh')], ownership: 'group+tag', graceMs: 300 });
    const [sleeper] = pidsIn(r.stdout);
    try {
      assert.ok(sleeper);
      assert.is(r.ownership, 'group+tag');
      assert.is(r.cgroup, undefined);
      assert.is(r.teardown.result, 'none', 'nothing found to end');
      assert.ok(alive(sleeper!), 'the sleeper survived: the limit stays documented');
    } finally {
      killQuietly(sleeper);
    }
  }),
);

test(
  'through the bin: --ownership cgroup ends the escaped grandchild; --report says cgroup',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const report = join(dir.path, 'report.json');
      const r = await runBin(settleBin, ['--ownership', 'cgroup', '--grace', '300ms', '--report', report, '--', sh('escape-both.sh')]);
      const [sleeper] = pidsIn(r.stdout);
      killQuietly(alive(sleeper ?? 0) ? sleeper : undefined);
      assert.is(r.exitCode, 0, r.stderr);
      assert.ok(sleeper);
      assert.not.ok(alive(sleeper!), 'dead when settle exits');
      const written = JSON.parse(readFileSync(report, 'utf8')) as Record<string, unknown>;
      assert.is(written.ownership, 'cgroup');
      assert.is(written.ownershipFallback, null);
      assert.match(String(written.cgroup), /\/settle-[A-Za-z0-9_]+$/);
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'through the bin: --ownership cgroup with no usable cgroup exits 125 naming why, nothing run',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const marker = join(dir.path, 'ran');
      const r = await runBin(settleBin, ['--ownership', 'cgroup', '--cgroup-parent', dir.path, '--', 'touch', marker]);
      assert.is(r.exitCode, 125);
      assert.is(
        r.stderr,
        `settle: cgroup_parent_invalid: ownership "cgroup" needs a cgroup: cgroup parent ${dir.path} is not a cgroup v2 directory\n  hint: --ownership auto falls back to the process group and tag\n`,
      );
      assert.not.ok(existsSync(marker), 'the command never ran');
      const usage = await runBin(settleBin, ['--ownership', 'systemd', '--', 'true']);
      assert.is(usage.exitCode, 125);
      assert.match(usage.stderr, 'settle: usage: --ownership systemd is not auto, cgroup or group+tag');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'auto with no usable cgroup falls back to group+tag and says why: settlement, event and --report',
  withTimeout(30_000, async () => {
    const dir = tempDir();
    try {
      const events: SettleEvent[] = [];
      const r = await capture({ argv: ['true'], cgroupParent: dir.path, onEvent: (e) => events.push(e) });
      const why = { reason: 'cgroup_parent_invalid', message: `cgroup parent ${dir.path} is not a cgroup v2 directory` };
      assert.is(r.reason, 'exited');
      assert.is(r.ownership, 'group+tag');
      assert.equal(r.ownershipFallback, why);
      assert.equal(
        events.find((e) => e.type === 'ownership'),
        { type: 'ownership', ownership: 'group+tag', fallback: why },
      );
      const report = join(dir.path, 'report.json');
      const bin = await runBin(settleBin, ['--cgroup-parent', dir.path, '--report', report, '--', 'true']);
      assert.is(bin.exitCode, 0, bin.stderr);
      const written = JSON.parse(readFileSync(report, 'utf8')) as Record<string, unknown>;
      assert.is(written.ownership, 'group+tag');
      assert.equal(written.ownershipFallback, why);
      assert.is(written.cgroup, null);
      const bad = await capture({ argv: ['true'], ownership: 'systemd' as never });
      assert.is(bad.reason, 'spawn_failed');
      assert.is(bad.error?.where, 'spec');
    } finally {
      dir.cleanup();
    }
  }),
);

test(
  'no cgroup2 mounted (a mount namespace without it): auto falls back with no_cgroup2; --ownership cgroup exits 125',
  withTimeout(30_000, async () => {
    const auto = await runBin(sh('without-cgroup2.sh'), [process.execPath, settleBin, '--report', '/dev/stdout', '--', 'true']);
    assert.is(auto.exitCode, 0, auto.stderr);
    const report = JSON.parse(auto.stdout) as { ownership: string; ownershipFallback: unknown };
    assert.is(report.ownership, 'group+tag');
    assert.equal(report.ownershipFallback, { reason: 'no_cgroup2', message: 'no cgroup2 file system is mounted (/proc/self/mountinfo)' });
    const forced = await runBin(sh('without-cgroup2.sh'), [process.execPath, settleBin, '--ownership', 'cgroup', '--', 'true']);
    assert.is(forced.exitCode, 125);
    assert.match(forced.stderr, /^settle: no_cgroup2: ownership "cgroup" needs a cgroup: no cgroup2 file system is mounted/);
  }),
);

test(
  'in a cgroup namespace whose root the cgroup2 mount does not show: auto falls back with cgroup_unknown',
  withTimeout(30_000, async () => {
    const dir = join(ownDir, `settle-test-cgns-${process.pid}`);
    mkdirSync(dir);
    try {
      const r = await runBin(sh('in-cgroup-namespace.sh'), [dir, process.execPath, settleBin, '--report', '/dev/stdout', '--', 'true']);
      assert.is(r.exitCode, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { ownership: string; ownershipFallback: unknown };
      assert.is(report.ownership, 'group+tag');
      assert.equal(report.ownershipFallback, { reason: 'cgroup_unknown', message: 'our cgroup / is outside every cgroup2 mount' });
    } finally {
      rmdirSync(dir);
    }
  }),
);

test(
  'not root (the bin as nobody): auto falls back with cgroup_unwritable; --ownership cgroup exits 125',
  withTimeout(30_000, async () => {
    const asNobody = ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, settleBin];
    const auto = await runBin('setpriv', [...asNobody, '--report', '/dev/stdout', '--', 'true']);
    assert.is(auto.exitCode, 0, auto.stderr);
    const report = JSON.parse(auto.stdout) as { ownership: string; ownershipFallback: { reason: string; message: string } };
    assert.is(report.ownership, 'group+tag');
    assert.is(report.ownershipFallback.reason, 'cgroup_unwritable');
    assert.match(report.ownershipFallback.message, `cannot create a cgroup in ${ownDir}: EACCES`);
    const forced = await runBin('setpriv', [...asNobody, '--ownership', 'cgroup', '--', 'true']);
    assert.is(forced.exitCode, 125);
    assert.match(forced.stderr, /^settle: cgroup_unwritable: ownership "cgroup" needs a cgroup: cannot create a cgroup in /);
  }),
);

test(
  'a cgroup that refuses processes (under a threaded cgroup): cgroup_join_failed, the cgroup removed; forced, spawn_failed at cgroup',
  withTimeout(30_000, async () => {
    const parent = join(ownDir, `settle-test-threaded-${process.pid}`);
    const threaded = join(parent, 't');
    mkdirSync(threaded, { recursive: true });
    try {
      writeFileSync(join(threaded, 'cgroup.type'), 'threaded');
      const r = await capture({ argv: ['true'], cgroupParent: threaded });
      assert.is(r.reason, 'exited');
      assert.is(r.ownership, 'group+tag');
      assert.is(r.ownershipFallback?.reason, 'cgroup_join_failed');
      const forced = await capture({ argv: ['true'], cgroupParent: threaded, ownership: 'cgroup' });
      assert.is(forced.reason, 'spawn_failed');
      assert.equal([forced.error?.code, forced.error?.where], ['cgroup_join_failed', 'cgroup']);
      assert.equal(
        readdirSync(threaded).filter((n) => n.startsWith('settle-')),
        [],
        'the refused cgroups were removed',
      );
    } finally {
      rmdirSync(threaded);
      rmdirSync(parent);
    }
  }),
);

test(
  '--cgroup-parent DIR: the cgroup is made there, and teardownByTag finds it there when told the parent',
  withTimeout(30_000, async () => {
    const parent = join(ownDir, `settle-test-parent-${process.pid}`);
    mkdirSync(parent);
    const ownerTag = newOwnerTag();
    let sleeper: number | undefined;
    try {
      const r = await capture({ argv: ['sh', '-c', 'cat /proc/self/cgroup'], cgroupParent: parent, ownerTag });
      assert.is(r.ownership, 'cgroup');
      assert.ok(r.cgroup?.startsWith(`${parent}/settle-${ownerTag}-`));
      assert.match(r.stdout.toString(), `/settle-test-parent-${process.pid}/settle-${ownerTag}-${r.tag}`);
      // A settle that was killed left its cgroup there with an escaped sleeper in it.
      const crashed = await crashedSettle(ownerTag, ['--cgroup-parent', parent]);
      sleeper = crashed.sleeper;
      assert.ok(existsSync(crashed.cgroup));
      assert.is((await teardownByTag(ownerTag, { graceMs: 300 })).result, 'none', 'not found without its parent');
      const report = await teardownByTag(ownerTag, { graceMs: 300, cgroupParents: [parent] });
      assert.ok(report.signalled.includes(sleeper));
      assert.not.ok(alive(sleeper));
      assert.not.ok(existsSync(crashed.cgroup), 'removed once empty');
    } finally {
      killQuietly(sleeper);
      rmdirSync(parent);
    }
  }),
);

// A driver that runs the escape fixture through the library with `ownerTag` and is then
// killed with SIGKILL, as a crashed coordinator: its escaped sleeper and cgroup stay behind.
async function crashedSettle(ownerTag: string, extra: string[] = []): Promise<{ sleeper: number; cgroup: string }> {
  const script = `
    const [index, fixture, ownerTag, parent] = process.argv.slice(1);
    const { stream } = await import(index);
    await stream({ argv: [fixture], ownerTag, ownership: 'cgroup', graceMs: 600000,
        ...(parent ? { cgroupParent: parent } : {}),
        onEvent: (e) => { if (e.type === 'ownership') process.stdout.write('cgroup ' + e.cgroup + '\\n'); } },
      null, async (out) => { for await (const c of out) process.stdout.write(c); });`;
  const index = new URL('../src/index.js', import.meta.url).pathname;
  const parent = extra[0] === '--cgroup-parent' ? extra[1]! : '';
  const driver = spawn(process.execPath, ['--input-type=module', '-e', script, index, sh('escape-both.sh'), ownerTag, parent], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let cgroup = '';
  let sleeper = 0;
  for await (const line of createInterface({ input: driver.stdout })) {
    if (line.startsWith('cgroup ')) cgroup = line.slice(7);
    else if (/^\d+$/.test(line)) sleeper = Number(line);
    if (cgroup && sleeper) break;
  }
  driver.kill('SIGKILL');
  await new Promise((resolve) => driver.once('close', resolve));
  if (!cgroup || !sleeper) throw new Error('the driver did not report its cgroup and sleeper');
  return { sleeper, cgroup };
}

test(
  'teardownByTag after a crash ends a cgroup’s escaped leftovers (found in our own cgroup’s directory) and removes it',
  withTimeout(30_000, async () => {
    const ownerTag = newOwnerTag();
    const { sleeper, cgroup } = await crashedSettle(ownerTag);
    try {
      assert.ok(alive(sleeper), 'the crash left the sleeper running');
      assert.equal(
        findTagged({ tags: [ownerTag] }).map((p) => p.pid),
        [sleeper],
        'findTagged sees it through its cgroup',
      );
      const report = await teardownByTag(ownerTag, { graceMs: 300 });
      assert.is(report.result, 'clean');
      assert.ok(report.signalled.includes(sleeper));
      assert.not.ok(alive(sleeper));
      assert.not.ok(existsSync(cgroup));
    } finally {
      killQuietly(sleeper);
    }
  }),
);

for (const ownership of ['cgroup', 'group+tag'] as const) {
  test(
    `[${ownership}] a fork storm is torn down at its deadline with nothing left`,
    withTimeout(60_000, async () => {
      // Only a cgroup finds the sleepers that also scrubbed their environment.
      const args = ownership === 'cgroup' ? ['scrubbed'] : [];
      const r = await capture({ argv: [sh('fork-storm.sh'), ...args], ownership, deadlineMs: 500, graceMs: 200 });
      assert.is(r.reason, 'timed_out');
      assert.is(r.ownership, ownership);
      assert.is(r.teardown.result, 'escalated', 'the sleepers ignore TERM');
      assert.equal(r.teardown.survivors, []);
      assert.equal(findTagged({ tags: [r.tag] }), [], 'no tagged process left');
      if (ownership === 'cgroup') assert.not.ok(existsSync(r.cgroup!), 'the cgroup is empty and removed');
    }),
  );
}

test.run();
