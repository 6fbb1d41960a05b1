// A `git` first on PATH for the bin tests: a shell fixture (test-fixtures/sh) that runs the
// real git ($RUNPLAN_TEST_REAL_GIT) except where it says otherwise: git-argv.sh logs each
// call, git-kill.sh kills the calls of one subcommand.
import { accessSync, constants, mkdirSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import * as assert from 'uvu/assert';
import { shFixture, tempDir } from '@runplan/test-fixtures';

export interface GitShim {
  /** `env` with the shim first on PATH and the fixture's variables set. */
  env: Record<string, string>;
  /** A scratch dir of its own (the shim's logs go here). */
  dir: string;
  cleanup(): void;
}

// The shim `fixture` installed as `git` in a fresh dir put first on env's PATH (`vars`
// may name files in `dir`: each is a function of it).
export function gitShim(env: Record<string, string>, fixture: string, vars: (dir: string) => Record<string, string> = () => ({})): GitShim {
  const dir = tempDir('runplan-git-shim-');
  const bin = join(dir.path, 'bin');
  mkdirSync(bin);
  symlinkSync(shFixture(fixture), join(bin, 'git'));
  const real = (env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, 'git'))
    .find((path) => {
      try {
        accessSync(path, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  assert.ok(real !== undefined, 'git is on PATH');
  return {
    env: { ...env, ...vars(dir.path), PATH: `${bin}${delimiter}${env.PATH}`, RUNPLAN_TEST_REAL_GIT: real },
    dir: dir.path,
    cleanup: () => dir.cleanup(),
  };
}
