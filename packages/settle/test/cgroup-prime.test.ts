// The warm-up of a cgroup join (primeCgroupJoin; src/cgroup.ts, primeJoin): a no-op move of
// this process into its own cgroup, made on the thread pool. A move landing between settle's
// move into a child's cgroup and its spawn would start the child outside that cgroup, so
// every spawn that joins waits for a warm-up in flight. The first tests hold a warm-up of
// their own (`primeJoin`'s `move`) in flight for as long as they need: a real one lands in
// microseconds, too soon to catch a spawn that does not wait. The last ones make real
// warm-ups and read where each child really ran.
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '@runplan/test-fixtures';
import { joinReady, primeJoin } from '../src/cgroup.js';
import { capture, ownCgroupDir, primeCgroupJoin, type SettleEvent } from '../src/index.js';

const own = ownCgroupDir();

// The child's cgroup as /proc/self/cgroup names it (`0::/path`), from the path settle made.
function procPath(cgroupDir: string, ownDir: string): string {
  const ownLine = /^0::(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '';
  const below = cgroupDir.slice(ownDir.length);
  return `${ownLine === '/' ? '' : ownLine}${below}`;
}

// A warm-up held in flight until `land()`; `land` is safe to call more than once.
function heldWarmUp(home: string): { land: () => void } {
  let land!: () => void;
  const landed = new Promise<void>((resolve) => (land = resolve));
  primeJoin(home, () => landed);
  return { land };
}

const home = own.ok ? own.value : '';

test(
  'a spawn that joins a cgroup waits for the warm-up in flight: no child starts until it has landed',
  withTimeout(30_000, async () => {
    assert.ok(own.ok);
    await joinReady();
    const held = heldWarmUp(home);
    try {
      const events: string[] = [];
      const running = capture({ argv: ['true'], ownership: 'cgroup', onEvent: (e) => events.push(e.type) });
      // Without the wait, the spawn happens in capture's first, synchronous step.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(events, [], 'nothing chosen or spawned while the warm-up is in flight');
      held.land();
      const r = await running;
      assert.is(r.reason, 'exited');
      assert.is(r.ownership, 'cgroup');
      assert.ok(events.includes('spawned'));
      assert.is(joinReady(), undefined);
    } finally {
      held.land();
    }
  }),
);

test(
  'a warm-up started while a spawn waited for the one before: the spawn waits for it too',
  withTimeout(30_000, async () => {
    assert.ok(own.ok);
    await joinReady();
    const first = heldWarmUp(home);
    const landed = joinReady()!;
    let second: { land: () => void } | undefined;
    try {
      // From the last check to the spawn nothing waits, so when a spawn is reported no warm-up
      // may be in flight: one that is, started before the spawn and was not waited for.
      const unwaited: string[] = [];
      const watch = (name: string) => (e: SettleEvent) => {
        if (e.type === 'ownership' && joinReady() !== undefined) unwaited.push(name);
      };
      const a = capture({ argv: ['true'], ownership: 'cgroup', onEvent: watch('a') });
      // Runs once the first warm-up landed, before at least one of the captures resumes.
      void landed.then(() => (second = heldWarmUp(home)));
      const b = capture({ argv: ['true'], ownership: 'cgroup', onEvent: watch('b') });
      first.land();
      await landed;
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(second !== undefined, 'the second warm-up started');
      second?.land();
      for (const r of await Promise.all([a, b])) {
        assert.is(r.reason, 'exited');
        assert.is(r.ownership, 'cgroup');
      }
      assert.equal(unwaited, [], 'no capture spawned while the second warm-up was in flight');
    } finally {
      first.land();
      second?.land();
    }
  }),
);

test(
  'an abort while a spawn waits for a warm-up: interrupted, nothing spawned, no cgroup left',
  withTimeout(30_000, async () => {
    assert.ok(own.ok);
    await joinReady();
    const held = heldWarmUp(home);
    try {
      const controller = new AbortController();
      const events: string[] = [];
      const running = capture({ argv: ['true'], ownership: 'cgroup', signal: controller.signal, onEvent: (e) => events.push(e.type) });
      await new Promise((resolve) => setImmediate(resolve));
      controller.abort('SIGTERM');
      // Bounded, so that a wait the abort does not end fails here instead of hanging the file.
      const r = await Promise.race([running, delay(10_000).then(() => undefined)]);
      assert.ok(r !== undefined, 'the abort ended the wait');
      assert.is(r.reason, 'interrupted', 'ended by the abort, the warm-up still in flight');
      assert.is(r.pid, undefined);
      assert.not.ok(events.includes('spawned'));
      assert.ok(joinReady() !== undefined, 'the warm-up is still in flight');
    } finally {
      held.land();
    }
  }),
);

test(
  'group+tag spawns do not wait for a warm-up (they join nothing)',
  withTimeout(30_000, async () => {
    await joinReady();
    const held = heldWarmUp(home);
    try {
      const r = await capture({ argv: ['true'], ownership: 'group+tag' });
      assert.is(r.reason, 'exited', 'settled while the warm-up is still in flight');
      assert.ok(joinReady() !== undefined);
    } finally {
      held.land();
    }
    await joinReady();
  }),
);

test(
  'a home that refuses a warm-up is never warmed again; one that failed otherwise is',
  withTimeout(10_000, async () => {
    await joinReady();
    const refusing = '/nonexistent/refusing-home';
    const failing = '/nonexistent/failing-home';
    const refused = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const busy = Object.assign(new Error('EAGAIN: try again'), { code: 'EAGAIN' });
    let asked = 0;
    primeJoin(refusing, () => {
      asked += 1;
      return Promise.reject(refused);
    });
    await joinReady();
    assert.is(joinReady(), undefined, 'a refused warm-up is no longer in flight');
    primeJoin(refusing, () => {
      asked += 1;
      return Promise.resolve();
    });
    assert.is(asked, 1, 'the refusing home is not asked again');
    assert.is(joinReady(), undefined);
    primeJoin(failing, () => Promise.reject(busy));
    await joinReady();
    primeJoin(failing, () => {
      asked += 1;
      return Promise.resolve();
    });
    await joinReady();
    assert.is(asked, 2, 'a home whose warm-up failed for another reason is warmed again');
  }),
);

test(
  'real warm-ups just before spawns: each child runs in its own cgroup',
  withTimeout(60_000, async () => {
    assert.ok(own.ok, 'this machine can make cgroups');
    for (let i = 0; i < 30; i++) {
      // The kernel's lock goes cold after about one RCU grace period of quiet (a few ms).
      await delay(40);
      primeCgroupJoin();
      const r = await capture({ argv: ['cat', '/proc/self/cgroup'], ownership: 'cgroup' });
      assert.is(r.reason, 'exited', JSON.stringify(r.error));
      assert.is(r.ownership, 'cgroup');
      const ran = /^0::(.*)$/m.exec(r.stdout.toString('utf8'))?.[1];
      assert.is(ran, procPath(r.cgroup!, home), `round ${i}: the child ran in its own cgroup`);
    }
  }),
);

test(
  'several captures at once behind one real warm-up: each child in its own cgroup, settle back home',
  withTimeout(30_000, async () => {
    assert.ok(own.ok);
    await delay(40);
    primeCgroupJoin();
    const all = await Promise.all(Array.from({ length: 8 }, () => capture({ argv: ['cat', '/proc/self/cgroup'], ownership: 'cgroup' })));
    for (const r of all) assert.is(/^0::(.*)$/m.exec(r.stdout.toString('utf8'))?.[1], procPath(r.cgroup!, home));
    assert.equal(ownCgroupDir(), own, 'settle itself is in the cgroup it started in');
  }),
);

test(
  'a warm-up is made only where a cgroup will be joined, one at a time',
  withTimeout(10_000, async () => {
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
    assert.equal(ownCgroupDir(), own, 'a warm-up leaves settle where it was');
  }),
);

test.run();
