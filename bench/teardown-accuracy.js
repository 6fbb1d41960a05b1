// How late settle settles after the moment it promised: the deadline (a child that dies on
// TERM), deadline + grace (a child that ignores TERM, so KILL comes after grace), and, for
// a child that exits at once leaving a grandchild holding stdout, grace after the exit.
// Overshoot = settled − that moment. A raw baseline does the least Node can: timers that
// signal the process group and the 'close'/'exit' events, no /proc scans, no verification.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { built, interleave, now, ratio, root, row, skipped } from './lib.js';

export const name = 'teardown-accuracy';
export const title = 'settlement overshoot past deadline / deadline + grace / grace after exit';

const DEADLINE = 50;
const GRACE = 150;
const fixtures = join(root, 'test-fixtures', 'sh');

const kill = (pid, signal) => {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
};

// settle: overshoot of capture() past `due` (ms after the 'spawned' event, or after the 'exited' event for held pipes).
async function settleTrial(capture, argv, spec, from, due) {
  let t0;
  await capture({
    argv,
    ...spec,
    onEvent: (e) => {
      if (e.type === from) t0 ??= now();
    },
  });
  return now() - t0 - due;
}

// raw: spawn in its own group, TERM the group at the deadline, KILL it at deadline + grace;
// settled on 'close'. For held pipes: after 'exit', wait grace for 'close', then stop reading.
function rawTrial(argv, { deadline, killAfter, heldPipe }) {
  return new Promise((resolve) => {
    const start = now();
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.resume();
    const timers = [];
    if (deadline !== undefined) timers.push(setTimeout(() => kill(-child.pid, 'SIGTERM'), deadline));
    if (killAfter !== undefined) timers.push(setTimeout(() => kill(-child.pid, 'SIGKILL'), killAfter));
    const done = (over) => {
      timers.forEach(clearTimeout);
      resolve({ over, out });
    };
    if (heldPipe) {
      child.on('exit', () => {
        const exited = now();
        const t = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          done(now() - exited - GRACE);
        }, GRACE);
        child.on('close', () => clearTimeout(t));
      });
    } else {
      child.on('close', () => done(now() - start - (killAfter ?? deadline)));
    }
  });
}

export async function measure({ quick }) {
  if (!built('settle')) return skipped(name, title, 'not available yet: packages/settle is not built (npm run build)');
  const { capture } = await import('@runplan/settle');
  const n = quick ? { term: 8, ignore: 6, held: 4 } : { term: 60, ignore: 40, held: 30 };
  const ignoreTerm = [join(fixtures, 'ignore-term.sh')];
  const holds = [join(fixtures, 'setsid-holds-stdout.sh')];

  const term = await interleave(
    [
      {
        key: 'settle',
        run: () =>
          settleTrial(capture, ['sleep', '600'], { deadlineMs: DEADLINE, graceMs: GRACE, ownership: 'group+tag' }, 'spawned', DEADLINE),
      },
      {
        key: 'cgroup',
        run: () => settleTrial(capture, ['sleep', '600'], { deadlineMs: DEADLINE, graceMs: GRACE, ownership: 'auto' }, 'spawned', DEADLINE),
      },
      { key: 'raw', run: async () => (await rawTrial(['sleep', '600'], { deadline: DEADLINE })).over },
    ],
    { rounds: n.term, warmup: 1 },
  );
  const ignore = await interleave(
    [
      {
        key: 'settle',
        run: () =>
          settleTrial(capture, ignoreTerm, { deadlineMs: DEADLINE, graceMs: GRACE, ownership: 'group+tag' }, 'spawned', DEADLINE + GRACE),
      },
      {
        key: 'cgroup',
        run: () =>
          settleTrial(capture, ignoreTerm, { deadlineMs: DEADLINE, graceMs: GRACE, ownership: 'auto' }, 'spawned', DEADLINE + GRACE),
      },
      { key: 'raw', run: async () => (await rawTrial(ignoreTerm, { deadline: DEADLINE, killAfter: DEADLINE + GRACE })).over },
    ],
    { rounds: n.ignore, warmup: 1 },
  );
  const held = await interleave(
    [
      { key: 'settle', run: () => settleTrial(capture, holds, { graceMs: GRACE, ownership: 'group+tag' }, 'exited', GRACE) },
      {
        key: 'raw',
        run: async () => {
          const r = await rawTrial(holds, { heldPipe: true });
          kill(Number(r.out.trim()), 'SIGKILL'); // the raw side leaves the grandchild behind: end it here
          return r.over;
        },
      },
    ],
    { rounds: n.held, warmup: 1 },
  );

  const rows = [
    row('TERM-honouring child, settle group+tag: past deadline', 'ms', term.settle),
    row('TERM-honouring child, raw timers: past deadline', 'ms', term.raw),
    row('TERM-ignoring child, settle group+tag: past deadline+grace', 'ms', ignore.settle),
    row('TERM-ignoring child, raw timers: past deadline+grace', 'ms', ignore.raw),
    row('held pipe, settle: past exit+grace', 'ms', held.settle),
    row('held pipe, raw: past exit+grace', 'ms', held.raw),
    row('TERM-honouring child, settle cgroup: past deadline', 'ms', term.cgroup),
    row('TERM-ignoring child, settle cgroup: past deadline+grace', 'ms', ignore.cgroup),
  ];
  const p99 = (i) => rows[i].p99;
  const limit = { limit: 20, better: 'lower', unit: 'ms' };
  return {
    name,
    title,
    rows,
    ratios: [
      ratio('p99 overshoot, deadline (TERM honoured)', p99(0), {
        ...limit,
        meaning: 'how late settle returns after the deadline when TERM ends the child',
      }),
      ratio('p99 overshoot, deadline + grace (TERM ignored)', p99(2), {
        ...limit,
        meaning: 'how late settle returns after deadline + grace when only KILL ends the child',
      }),
      ratio('p99 overshoot, held pipe: exit + grace', p99(4), {
        ...limit,
        meaning: 'how late settle returns after grace when a grandchild holds stdout past the exit',
      }),
      ratio('p99 overshoot, deadline, cgroup mode', p99(6), {
        ...limit,
        meaning: 'as the first, with the child in its own cgroup (auto as root)',
      }),
      ratio('p99 overshoot, deadline + grace, cgroup mode', p99(7), {
        ...limit,
        meaning: 'as the second, with cgroup.kill ending the cgroup after grace',
      }),
      ratio('raw p99, deadline + grace', p99(3), { unit: 'ms', meaning: 'the floor: timers + kill + exit event, nothing verified' }),
    ],
    notes: [`deadline ${DEADLINE} ms, grace ${GRACE} ms; held pipe: setsid-holds-stdout.sh (the grandchild dies on TERM)`],
  };
}
