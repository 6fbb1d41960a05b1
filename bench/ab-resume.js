// A/B: `runplan run` resuming N checkpoints, old tree's bin vs this tree's, alternating rounds.
// node bench/ab-resume.js OLD_ROOT [N] [ROUNDS] (OLD_ROOT: another built checkout; not part of `npm run bench`)
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { forgeState } from './resume-decision.js';
import { gitEnv, now, reapedCpuMs, root, scratch } from './lib.js';

const [oldRoot, n = '10000', rounds = '3'] = process.argv.slice(2);
const dir = scratch('ab-resume');
const s = await forgeState(dir.path, Number(n));
const once = (bin) =>
  new Promise((done) => {
    rmSync(join(s.stateRoot, 'resume'), { recursive: true, force: true });
    cpSync(s.pristine, join(s.stateRoot, 'resume'), { recursive: true });
    spawnSync('sync'); // the copy on disk before the clock starts, as resume-decision does
    const cpu0 = reapedCpuMs();
    const t0 = now();
    let decided;
    let err = '';
    const child = spawn(process.execPath, [bin, 'run', join(dir.path, 'plan.toml'), '--repo', s.repo, '--state-dir', s.stateRoot], {
      cwd: s.repo,
      env: gitEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.setEncoding('utf8').on('data', (c) => {
      err += c;
      if (decided === undefined && /^runplan: (complete|failed):/m.test(err)) decided = now() - t0;
    });
    child.on('close', (code) => done({ code, ms: now() - t0, decided, cpu: reapedCpuMs() - cpu0, err }));
  });
const sides = { old: join(oldRoot, 'packages/runplan/bin/runplan.js'), new: join(root, 'packages/runplan/bin/runplan.js') };
const out = { old: [], new: [] };
for (let r = 0; r < Number(rounds); r++)
  for (const k of r % 2 ? ['new', 'old'] : ['old', 'new']) {
    const x = await once(sides[k]);
    if (x.code !== 0) throw new Error(`${k} exited ${x.code}: ${x.err.slice(-400)}`);
    out[k].push(x);
    console.log(k, Math.round(x.ms), 'ms wall', Math.round(x.decided), 'ms to summary', Math.round(x.cpu), 'ms cpu');
  }
const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const k of ['old', 'new'])
  console.log(
    `${k}: median wall ${Math.round(med(out[k].map((x) => x.ms)))} ms, summary ${Math.round(med(out[k].map((x) => x.decided)))} ms, cpu ${Math.round(med(out[k].map((x) => x.cpu)))} ms`,
  );
dir.cleanup();
