import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isAlive, parseProcStat, processIdentity } from '../src/index.js';

test('parseProcStat counts fields after the last parenthesis', () => {
  const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
  fields[0] = 'S';
  fields[19] = '987654';
  const stat = parseProcStat(`42 (a) b (c)) ${fields.join(' ')}`);
  assert.equal(stat?.pid, 42);
  assert.equal(stat?.state, 'S');
  assert.equal(stat?.startTime, 987654);
});

test('processIdentity of this process is alive; a changed start time is not', () => {
  const me = processIdentity(process.pid);
  assert.ok(me);
  assert.ok(isAlive(me));
  assert.not.ok(isAlive({ ...me, startTime: me.startTime + 1 }));
  assert.not.ok(isAlive({ ...me, bootId: 'another-boot' }));
});

test('processIdentity of this process (its start time read once) is the start time /proc/self/stat gives, every time', () => {
  const direct = Number(readFileSync('/proc/self/stat', 'utf8').split(') ').at(-1)!.split(' ')[19]);
  for (let i = 0; i < 3; i++) assert.is(processIdentity(process.pid)?.startTime, direct);
  assert.is(processIdentity(process.pid)?.host, processIdentity(process.ppid)?.host);
  assert.is.not(processIdentity(process.ppid)?.startTime, undefined);
});

test('a zombie is dead even though its pid exists', () => {
  const me = processIdentity(process.pid);
  assert.ok(me);
  const zombie = (pid: number) => ({ pid, state: 'Z', ppid: 1, pgrp: pid, startTime: me.startTime });
  assert.not.ok(isAlive(me, zombie));
});

test.run();
