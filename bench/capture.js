// In-process capture({argv: ['/bin/true']}) against raw child_process.spawn and execa 9.
// All three collect stdout and stderr through pipes and return after the child exited and
// both pipes reached EOF; none gets stdin (settle's default is /dev/null, so execa and the
// raw spawn are given 'ignore' too). settle also leads a new process group and tags the
// child's environment. In group+tag mode it then scans /proc once after the exit for
// leftovers of the tree it owns (timed on its own below); in cgroup mode it makes a cgroup,
// spawns from inside it, and after the exit reads `cgroup.events` once and removes it — no
// /proc scan. Both modes are measured side by side (as root, `auto` is cgroup mode).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { built, context, interleave, now, pairedRatio, ratio, root, row, skipped } from './lib.js';

export const name = 'capture';
export const title = 'in-process `capture({argv: ["/bin/true"]})` vs raw spawn and execa 9';

// Raw Node: spawn, drain both pipes into buffers, resolve on 'close' (exit + both EOFs).
function rawCapture(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
  });
}

// The floor of what cgroup mode guarantees, with none of settle's logic: the raw capture
// above plus exactly the system calls a cgroup-mode capture() cannot do without — make the
// child's cgroup, move in, spawn, move back, read the child's start time and its two pipe
// ends from /proc (the identity every later signal is checked against, and the held-pipe
// match), and remove the cgroup after the exit.
function guaranteeFloor(parent, home) {
  return async () => {
    const dir = join(parent, `bench-floor-${process.pid}-${floorCalls++}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'cgroup.procs'), '0');
    let done;
    try {
      done = rawCaptureStarted('/bin/true');
    } finally {
      writeFileSync(join(home, 'cgroup.procs'), '0');
    }
    const pid = done.pid;
    try {
      readFileSync(`/proc/${pid}/stat`, 'latin1');
      readlinkSync(`/proc/${pid}/fd/1`);
      readlinkSync(`/proc/${pid}/fd/2`);
    } catch {
      // exited already: the floor then reads less, never more
    }
    await done.closed;
    rmdirSync(dir);
  };
}
let floorCalls = 0;

// rawCapture, split at the spawn: the pid right away, the result at close.
function rawCaptureStarted(file) {
  const child = spawn(file, [], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const closed = new Promise((resolve, reject) => {
    child.stdout.on('data', () => {});
    child.stderr.on('data', () => {});
    child.on('error', reject);
    child.on('close', resolve);
  });
  return { pid: child.pid, closed };
}

// Mean ms per call over `batch` sequential calls.
async function perCall(batch, call) {
  const start = now();
  for (let i = 0; i < batch; i++) await call();
  return (now() - start) / batch;
}

export async function measure({ quick }) {
  if (!built('settle')) return skipped(name, title, 'not available yet: packages/settle is not built (npm run build)');
  const { capture, newOwnerTag, realProc, ownCgroupDir } = await import('@runplan/settle');
  // settle's own scan, not a copy of it (internal, so imported from the built file).
  const { findOwned } = await import(pathToFileURL(join(root, 'packages/settle/dist/src/owned.js')).href);
  const { execa } = await import('execa');
  const batch = quick ? 10 : 20;

  // Count what one capture() does with /proc by handing it a counting reader.
  let scans = 0;
  const counting = { listPids: () => (scans++, realProc.listPids()) };
  const probe = await capture({ argv: ['/bin/true'], proc: counting, ownership: 'group+tag' });
  if (probe.reason !== 'exited' || probe.exitCode !== 0) throw new Error(`capture(/bin/true) settled ${probe.reason} ${probe.exitCode}`);
  const scansPerCall = scans;
  scans = 0;
  const cgroupProbe = await capture({ argv: ['/bin/true'], proc: counting, ownership: 'auto' });
  const cgroupMode = cgroupProbe.ownership === 'cgroup';
  const cgroupScans = scans;

  // One ownership scan exactly as capture() makes it after the child exited: settle's
  // findOwned over an ownership whose child started just now (start time = now, in clock
  // ticks since boot), whose group is gone and whose fresh tag nobody carries. It reads every
  // process's stat, and environ only of processes no older than the child.
  const scanOnce = () => {
    const nowTicks = Math.floor(Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]) * 100);
    return findOwned({ pgid: -1, groupStartTime: nowTicks, tags: [newOwnerTag()] }, realProc);
  };
  const processes = realProc.listPids().length;
  // The floor of any walk of /proc: every process's stat, nothing else.
  const statOnly = () => {
    for (const pid of realProc.listPids()) if (pid !== process.pid) realProc.readStat(pid);
  };

  const home = cgroupMode ? ownCgroupDir() : undefined;
  const floor = home?.ok ? guaranteeFloor(home.value, home.value) : undefined;
  const v = await interleave(
    [
      ...(floor ? [{ key: 'floor', run: () => perCall(batch, floor) }] : []),
      { key: 'raw', run: () => perCall(batch, () => rawCapture('/bin/true')) },
      { key: 'execa', run: () => perCall(batch, () => execa('/bin/true', { reject: false, stdin: 'ignore' })) },
      { key: 'settle', run: () => perCall(batch, () => capture({ argv: ['/bin/true'], ownership: 'group+tag' })) },
      { key: 'cgroup', run: () => perCall(batch, () => capture({ argv: ['/bin/true'], ownership: 'auto' })) },
      { key: 'scan', run: () => perCall(batch, async () => scanOnce()) },
      { key: 'statOnly', run: () => perCall(batch, async () => statOnly()) },
    ],
    { rounds: quick ? 4 : 15, warmup: 1 },
  );
  const rows = [
    row('raw child_process.spawn', 'ms', v.raw),
    row('execa 9', 'ms', v.execa),
    row('settle capture(), group+tag', 'ms', v.settle),
    row(`settle capture(), ${cgroupMode ? 'cgroup' : `auto (fell back: ${cgroupProbe.ownershipFallback?.reason})`}`, 'ms', v.cgroup),
    row(`one ownership scan (${processes} processes)`, 'ms', v.scan),
    row('walk floor: every stat, no environ', 'ms', v.statOnly),
    ...(floor ? [row('guarantee floor: raw + cgroup made, joined, left, removed + child identity reads', 'ms', v.floor)] : []),
  ];
  const [raw, , se, cg, scan] = rows.map((r) => r.median);
  return {
    name,
    title,
    rows,
    ratios: [
      ratio('capture / execa 9', pairedRatio(v.settle, v.execa), {
        limit: 0.7,
        better: 'lower',
        meaning: 'time per call relative to execa 9 doing the same capture',
      }),
      context('capture / raw spawn, group+tag', pairedRatio(v.settle, v.raw), 'time per call relative to the bare Node spawn'),
      ratio('capture / raw spawn, cgroup', pairedRatio(v.cgroup, v.raw), {
        limit: 1.3,
        better: 'lower',
        meaning: 'the same in cgroup mode: a cgroup made, joined around the spawn, read once and removed; no /proc scan',
      }),
      ...(floor
        ? [
            context(
              'guarantee floor / raw spawn',
              pairedRatio(v.floor, v.raw),
              "the cgroup's own system calls and the child's identity reads alone, no settle logic, relative to the bare spawn",
            ),
            context('capture cgroup / guarantee floor', pairedRatio(v.cgroup, v.floor), 'what settle adds beyond those calls'),
          ]
        : []),
      context('cgroup / group+tag', pairedRatio(v.cgroup, v.settle), 'capture in cgroup mode relative to group+tag mode'),
      context('overhead over raw, group+tag', se - raw, 'ms settle adds per call', 'ms'),
      context('overhead over raw, cgroup', cg - raw, 'ms settle adds per call', 'ms'),
      context('of which ownership scans', scan * scansPerCall, `ms: ${scansPerCall} scan(s) per call × one scan`, 'ms'),
    ],
    notes: [
      `each value is the mean of ${batch} sequential calls; capture() scanned /proc ${scansPerCall}× per call in group+tag mode, ${cgroupScans}× in ${cgroupMode ? 'cgroup' : 'auto'} mode (${processes} processes visible)`,
    ],
  };
}
