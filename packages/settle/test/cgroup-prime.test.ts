// The warm-up of a cgroup join (primeCgroupJoin; src/cgroup.ts, primeJoin): a no-op move of
// this process into its own cgroup, made on the thread pool. A move landing between settle's
// move into a child's cgroup and its spawn would start the child outside that cgroup, so
// every spawn that joins waits for a warm-up in flight. These tests start one moments before
// each spawn and read where the child really ran.
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '@runplan/test-fixtures';
import { joinReady, primeJoin } from '../src/cgroup.js';
import { capture, ownCgroupDir, primeCgroupJoin } from '../src/index.js';

const own = ownCgroupDir();

// The child's cgroup as /proc/self/cgroup names it (`0::/path`), from the path settle made.
function procPath(cgroupDir: string, ownDir: string): string {
  const ownLine = /^0::(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '';
  const below = cgroupDir.slice(ownDir.length);
  return `${ownLine === '/' ? '' : ownLine}${below}`;
}

test(
  'a spawn that joins a cgroup waits for the warm-up in flight: no child starts until it has landed',
  withTimeout(30_000, async () => {
    assert.ok(own.ok);
    await joinReady();
    let land!: () => void;
    const landed = new Promise<void>((resolve) => (land = resolve));
    primeJoin(own.ok ? own.value : '', () => landed);
    const events: string[] = [];
    const running = capture({ argv: ['true'], ownership: 'cgroup', onEvent: (e) => events.push(e.type) });
    // Without the wait, the spawn happens in capture's first, synchronous step.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(events, [], 'nothing chosen or spawned while the warm-up is in flight');
    land();
    const r = await running;
    assert.is(r.reason, 'exited');
    assert.is(r.ownership, 'cgroup');
    assert.ok(events.includes('spawned'));
    assert.is(joinReady(), undefined);
  }),
);

test(
  'a warm-up started while a spawn waited for the one before: the spawn waits for it too',
  withTimeout(30_000, async () => {
    assert.ok(own.ok);
    await joinReady();
    const home = own.ok ? own.value : '';
    let landFirst!: () => void;
    let landSecond!: () => void;
    const second = new Promise<void>((resolve) => (landSecond = resolve));
    primeJoin(home, () => new Promise<void>((resolve) => (landFirst = resolve)));
    const first = joinReady()!;
    const events: string[] = [];
    const a = capture({ argv: ['true'], ownership: 'cgroup' });
    // Runs after the first capture resumes and before the second does: another warm-up starts.
    void first.then(() => primeJoin(home, () => second));
    const b = capture({ argv: ['true'], ownership: 'cgroup', onEvent: (e) => events.push(e.type) });
    landFirst();
    assert.is((await a).reason, 'exited');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(events, [], 'the second capture waits for the warm-up that started while it waited');
    landSecond();
    const r = await b;
    assert.is(r.reason, 'exited');
    assert.is(r.ownership, 'cgroup');
  }),
);

test(
  'group+tag spawns do not wait for a warm-up (they join nothing)',
  withTimeout(30_000, async () => {
    await joinReady();
    let land!: () => void;
    const landed = new Promise<void>((resolve) => (land = resolve));
    primeJoin(own.ok ? own.value : '', () => landed);
    const r = await capture({ argv: ['true'], ownership: 'group+tag' });
    assert.is(r.reason, 'exited', 'settled while the warm-up is still in flight');
    assert.ok(joinReady() !== undefined);
    land();
    await joinReady();
  }),
);

test(
  'a warm-up started just before a spawn lands before its join: each child runs in its own cgroup',
  withTimeout(60_000, async () => {
    assert.ok(own.ok, 'this machine can make cgroups');
    for (let i = 0; i < 30; i++) {
      // The kernel's lock goes cold after about one RCU grace period of quiet (a few ms): then
      // the warm-up and the join both wait for a new one, and, without the wait for the
      // warm-up, the warm-up's move could follow the join's.
      await delay(40);
      primeCgroupJoin();
      const r = await capture({ argv: ['cat', '/proc/self/cgroup'], ownership: 'cgroup' });
      assert.is(r.reason, 'exited', JSON.stringify(r.error));
      assert.is(r.ownership, 'cgroup');
      const ran = /^0::(.*)$/m.exec(r.stdout.toString('utf8'))?.[1];
      assert.is(ran, procPath(r.cgroup!, own.ok ? own.value : ''), `round ${i}: the child ran in its own cgroup`);
    }
  }),
);

test(
  'several captures at once behind one warm-up: each child in its own cgroup, settle back home',
  withTimeout(30_000, async () => {
    assert.ok(own.ok);
    await delay(40);
    primeCgroupJoin();
    const all = await Promise.all(Array.from({ length: 8 }, () => capture({ argv: ['cat', '/proc/self/cgroup'], ownership: 'cgroup' })));
    for (const r of all) assert.is(/^0::(.*)$/m.exec(r.stdout.toString('utf8'))?.[1], procPath(r.cgroup!, own.ok ? own.value : ''));
    assert.equal(ownCgroupDir(), own, 'settle itself is in the cgroup it started in');
  }),
);

test('a warm-up is made only where a cgroup will be joined, one at a time', async () => {
  await joinReady();
  primeCgroupJoin({ ownership: 'group+tag' });
  assert.is(joinReady(), undefined, 'group+tag joins no cgroup: nothing is moved');
  primeCgroupJoin({ cgroupParent: '/proc' });
  assert.is(joinReady(), undefined, 'a parent that is no cgroup v2 directory: no cgroup will be made');
  primeCgroupJoin();
  const first = joinReady();
  assert.ok(first instanceof Promise, 'in flight');
  primeCgroupJoin();
  assert.is(joinReady(), first, 'a second call while one is in flight starts no other');
  await first;
  assert.is(joinReady(), undefined, 'cleared once it landed');
});

test.run();
