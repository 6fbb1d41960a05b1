import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { binPath, runBin, type BinResult } from '@runplan/test-fixtures';
import { MARK_FILE, type PruneReport, type RunDirMark } from '../src/index.js';

// Makes `dir` (if needed) and writes a mark into it by hand, with a chosen creation time.
export function plantMark(dir: string, mark: Partial<RunDirMark> & { template: string; runId: string; createdAt: string }): void {
  mkdirSync(dir, { recursive: true });
  const full: RunDirMark = {
    creator: { pid: 1, startTime: 1, bootId: 'test-boot', host: 'test-host' },
    kind: 'run',
    ...mark,
  };
  writeFileSync(join(dir, MARK_FILE), JSON.stringify(full));
}

// An ISO time `minutes` after a fixed origin, so tests can order marks without sleeping.
export function at(minutes: number): string {
  return new Date(Date.UTC(2026, 10, 29, 7, 0) + minutes * 60_000).toISOString();
}

// Runs the real workdir bin.
export function workdir(args: string[], env?: NodeJS.ProcessEnv, cwd?: string): Promise<BinResult> {
  return runBin(binPath('workdir'), args, {
    ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
    ...(cwd === undefined ? {} : { cwd }),
  });
}

// Runs the real workdir bin in a child whose umask is `mask` (see umask-child.ts).
export function workdirWithUmask(mask: number, args: string[]): Promise<BinResult> {
  return runBin(join(import.meta.dirname, 'umask-child.js'), [mask.toString(8), binPath('workdir'), ...args]);
}

// Asserts a bin failed with `code` and exactly one error line (plus an optional hint) naming `reason`.
export function stderrLines(result: BinResult): string[] {
  return result.stderr.split('\n').filter((line) => line !== '');
}

/**
 * A holding directory with one entry of every kind prune must judge. Returns the template,
 * the holding dir and the names expected to go (oldest first) with retain = 2.
 */
export function plantMix(root: string) {
  const template = `${root}/{{plan.slug}}/runs/{{run.id}}.{{run.attempt}}`;
  const holding = join(root, 'p', 'runs');
  const ours = (name: string, minutes: number, extra: Record<string, string> = {}) =>
    plantMark(join(holding, name), { template, runId: name.split('.')[0]!, createdAt: at(minutes), ...extra });
  // Ours: removed oldest first by mark time (not by name), newest two retained.
  ours('r1.1', 20);
  ours('r2.1', 10);
  ours('r3.1', 30);
  ours('r4.1', 40);
  // Older than all of ours, but each is not ours for one reason.
  mkdirSync(join(holding, 'r5.1'), { recursive: true }); // crash between mkdir and mark
  plantMark(join(root, 'outside', 'target'), { template, runId: 'r6', createdAt: at(0) });
  symlinkSync(join(root, 'outside', 'target'), join(holding, 'r6.1'));
  plantMark(join(holding, 'stray'), { template, runId: 'stray', createdAt: at(0) }); // lacks the ".N" literal
  plantMark(join(holding, 'r+7.1'), { template, runId: 'r+7', createdAt: at(0) }); // '+' is no identifier character
  plantMark(join(holding, 'r7.x'), { template, runId: 'r7', createdAt: at(0) }); // attempt is not an integer
  ours('r8.1', 0); // in flight
  plantMark(join(holding, 'r9.1'), { template: `${root}/{{plan.slug}}/other/{{run.id}}.{{run.attempt}}`, runId: 'r9', createdAt: at(0) });
  plantMark(join(holding, 'r10.1'), { template, runId: 'r10', createdAt: at(0), kind: 'datadir' });
  writeFileSync(join(holding, 'r11.1'), 'a file');
  mkdirSync(join(holding, 'r12.1'));
  writeFileSync(join(holding, 'r12.1', MARK_FILE), 'not json');
  mkdirSync(join(holding, 'r13.1'));
  symlinkSync(join(root, 'outside', 'target', MARK_FILE), join(holding, 'r13.1', MARK_FILE)); // a symlinked mark is no mark
  return {
    template,
    holding,
    inFlight: [join(holding, 'r8.1')],
    removed: ['r2.1', 'r1.1'],
    kept: {
      'r10.1': 'other_template',
      'r11.1': 'not_directory',
      'r12.1': 'bad_mark',
      'r13.1': 'bad_mark',
      'r+7.1': 'not_matching',
      'r3.1': 'retained',
      'r4.1': 'retained',
      'r5.1': 'unmarked',
      'r6.1': 'symlink',
      'r7.x': 'not_matching',
      'r8.1': 'in_flight',
      'r9.1': 'other_template',
      stray: 'not_matching',
    } as Record<string, string>,
  };
}

export function keptByName(report: PruneReport): Record<string, string> {
  return Object.fromEntries(report.kept.map((entry) => [entry.path.slice(report.holding.length + 1), entry.reason]));
}
