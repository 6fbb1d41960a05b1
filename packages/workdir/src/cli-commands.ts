import { typedValue, typedValues } from '@runplan/common';
import { count, readVars, UsageError } from './cli-args.js';
import { reportError, reportTemplateError } from './cli-failure.js';
import { createDataDir } from './datadir.js';
import { holdingDirectory } from './path-template.js';
import { prune } from './prune.js';
import { render } from './render.js';
import { createRunDir } from './run-dir.js';
import { TIERS, type Tier } from './variables.js';

// The five commands: each reads its own arguments, calls the library and prints its answer.

/** What a command talks to: stdout and stderr a line at a time, and the one `now` of this call. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  now: Date;
}

// `workdir render`: the template rendered for --tier (default workdir), on stdout.
export function runRender(template: string, argv: string[], io: Io): number {
  const tierText = typedValue(argv, 'tier') ?? 'workdir';
  if (!(TIERS as readonly string[]).includes(tierText)) {
    throw new UsageError('usage', `--tier ${JSON.stringify(tierText)} is not one of ${TIERS.join(', ')}`);
  }
  const rendered = render(template, readVars(argv, io.now), tierText as Tier);
  if (!rendered.ok) return reportTemplateError(rendered.error, io);
  io.out(rendered.value);
  return 0;
}

// `workdir create`: the marked run directory made (or reused); its path or --json on stdout.
export async function runCreate(template: string, argv: string[], options: { json?: boolean }, io: Io): Promise<number> {
  const created = await createRunDir(template, readVars(argv, io.now), { now: io.now });
  if (!created.ok) return reportError(created.error, template, io);
  io.out(options.json ? JSON.stringify(created.value) : created.value.path);
  return 0;
}

// `workdir datadir`: the run's datadir made, older ones pruned to --keep-runs; exit 1 when a removal failed.
export async function runDataDir(workdir: string, argv: string[], options: { dryRun?: boolean; json?: boolean }, io: Io): Promise<number> {
  const runId = typedValue(argv, 'run-id');
  if (runId === undefined) throw new UsageError('usage', 'datadir needs --run-id ID');
  const keepText = typedValue(argv, 'keep-runs');
  const keepRuns = keepText === undefined ? undefined : count(keepText, '--keep-runs');
  const opts = { inFlight: typedValues(argv, 'in-flight'), dryRun: options.dryRun ?? false, now: io.now };
  const created = await createDataDir(workdir, runId, keepRuns === undefined ? opts : { ...opts, keepRuns });
  if (!created.ok) return reportError(created.error, undefined, io);
  io.out(options.json ? JSON.stringify(created.value) : created.value.path);
  for (const failure of created.value.pruneFailed) io.err(`workdir: remove_failed: ${failure.message}`);
  return created.value.pruneFailed.length > 0 ? 1 : 0;
}

// `workdir holding`: the directory the template's run directories are made in.
export function runHolding(template: string, argv: string[], io: Io): number {
  const holding = holdingDirectory(template, readVars(argv, io.now));
  if (!holding.ok) return reportError(holding.error, template, io);
  io.out(holding.value);
  return 0;
}

// `workdir prune`: run directories beyond the newest --retain removed (or listed with --dry-run); exit 1 when one could not be.
export async function runPrune(template: string, argv: string[], options: { dryRun?: boolean; json?: boolean }, io: Io): Promise<number> {
  const retainText = typedValue(argv, 'retain');
  if (retainText === undefined) throw new UsageError('usage', 'prune needs --retain N');
  const retain = count(retainText, '--retain');
  const report = await prune(template, readVars(argv, io.now), {
    retain,
    inFlight: typedValues(argv, 'in-flight'),
    dryRun: options.dryRun ?? false,
  });
  if (!report.ok) return reportError(report.error, template, io);
  const { removed, kept, failed, dryRun } = report.value;
  const action = dryRun ? 'would_remove' : 'removed';
  for (const path of removed) io.out(options.json ? JSON.stringify({ action, path }) : path);
  if (options.json) {
    for (const entry of kept) io.out(JSON.stringify({ action: 'kept', ...entry }));
    for (const entry of failed) io.out(JSON.stringify({ action: 'failed', ...entry }));
  }
  for (const failure of failed) io.err(`workdir: remove_failed: ${failure.message}`);
  return failed.length > 0 ? 1 : 0;
}
