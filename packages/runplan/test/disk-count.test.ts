// The DISK column of `runplan status`: counted by find(1) in a child process when it can, by
// the in-process walk otherwise — the same number either way, never a partial one.
import { accessSync, constants, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { shFixture, tempDir, withTimeout } from '@runplan/test-fixtures';
import { countDiskUsage, sumFindLines } from '../src/host/disk-count.js';
import { diskUsage } from '../src/host/state.js';
import { runplan, slugDir, withPlan } from './support.js';

const dir = tempDir('runplan-disk-count-');
test.after(() => dir.cleanup());

// The real find on this machine's PATH.
function realFind(): string {
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(d, 'find'), constants.X_OK);
      return join(d, 'find');
    } catch {
      // not here
    }
  }
  throw new Error('no find(1) on PATH');
}

// A directory holding one executable `find`: the given sh fixture.
function pathWithFind(name: string, fixture: string): string {
  const bin = join(dir.path, name);
  mkdirSync(bin);
  symlinkSync(shFixture(fixture), join(bin, 'find'));
  return bin;
}

// Runs `body` with these variables set in process.env (the child find is looked up in PATH), then puts them back.
async function withEnv<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

// A tree with what a state dir can hold: nested dirs, files of many sizes, an empty dir, a
// FIFO, a symlink to a file and one to a directory (counted as links, never followed).
function makeTree(root: string): void {
  for (let a = 0; a < 4; a++)
    for (let b = 0; b < 3; b++) {
      const d = join(root, `a${a}`, `b${b}`, 'c');
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'f'), Buffer.alloc(a * 1000 + b * 7));
    }
  mkdirSync(join(root, 'empty'));
  writeFileSync(join(root, 'top'), 'x'.repeat(12_345));
  symlinkSync(join(root, 'top'), join(root, 'link-to-file'));
  symlinkSync(join(root, 'a1'), join(root, 'link-to-dir'));
  execFileSync('mkfifo', [join(root, 'fifo')]);
}

test(
  'find counts what the in-process walk counts: files at every depth, links as themselves, a FIFO, a root given as a symlink',
  withTimeout(20_000, async () => {
    const root = join(dir.path, 'tree');
    makeTree(root);
    const walked = await diskUsage(root);
    assert.ok(walked > 12_345, `the tree holds bytes: ${walked}`);
    const log = join(dir.path, 'find.log');
    const bin = pathWithFind('logged', 'find-logged.sh');
    // The logging find reports one more file of a million bytes: a count that has it came from find.
    const extra = 1_000_000;
    await withEnv(
      { FIND_LOG: log, FIND_REAL: realFind(), FIND_EXTRA: String(extra), PATH: `${bin}${delimiter}${process.env.PATH}` },
      async () => {
        assert.is(await countDiskUsage(root), walked + extra);
        symlinkSync(root, join(dir.path, 'tree-link'));
        assert.is(await countDiskUsage(join(dir.path, 'tree-link')), walked + extra);
      },
    );
    assert.equal(readFileSync(log, 'utf8').trim().split('\n'), [
      `-H ${root} -printf %y %s\\n`,
      `-H ${join(dir.path, 'tree-link')} -printf %y %s\\n`,
    ]);
    assert.is(await countDiskUsage(join(dir.path, 'missing')), 0);
  }),
);

test(
  'a find that fails part way, complains on stderr but exits 0, floods its output, prints what is not its -printf format, or is missing: the walk counts instead',
  withTimeout(30_000, async () => {
    const root = join(dir.path, 'tree2');
    makeTree(root);
    const walked = await diskUsage(root);
    const none = join(dir.path, 'no-find');
    mkdirSync(none);
    const finds = ['find-fails.sh', 'find-complains.sh', 'find-floods.sh', 'find-garbage.sh'].map((name) => pathWithFind(name, name));
    // Each stand-in shadows the real find (the rest of PATH stays: the flood needs yes and head).
    for (const path of [...finds.map((bin) => `${bin}${delimiter}${process.env.PATH}`), none])
      assert.is(await withEnv({ PATH: path }, () => countDiskUsage(root)), walked, path);
  }),
);

test('sumFindLines: the sum of every non-directory line; undefined for any line that is not "TYPE SIZE" or a root that is not a directory', () => {
  assert.is(sumFindLines('d 4096\nf 10\nl 7\np 0\nd 4096\nf 5\n'), 22);
  assert.is(sumFindLines('d 4096\n'), 0);
  for (const text of ['', 'f 10\n', 'd 4096\nf 10', 'd 4096\nf x\n', 'd 4096\n/tmp/a\n', 'd 4096\nf  10\n', 'd 4096\nf -1\n'])
    assert.is(sumFindLines(text), undefined, JSON.stringify(text));
});

test(
  'runplan status shows the same DISK whether find counts it or the walk does (a failing find on PATH)',
  withPlan('single', {}, async (f) => {
    const run = await runplan(['run', f.plan], f);
    assert.is(run.exitCode, 0, run.stderr);
    const diskOf = async (env: Record<string, string>) => {
      const r = await runplan(['status', 'single', '--json'], { ...f, env });
      assert.is(r.exitCode, 0, r.stderr);
      return (JSON.parse(r.stdout) as { diskBytes: number }).diskBytes;
    };
    const expected = await diskUsage(slugDir(f.repo, 'single'));
    assert.ok(expected > 0);
    assert.is(await diskOf(f.env), expected);
    const failing = pathWithFind('failing-bin', 'find-fails.sh');
    assert.is(await diskOf({ ...f.env, PATH: `${failing}${delimiter}${f.env.PATH}` }), expected);
  }),
);

test.run();
