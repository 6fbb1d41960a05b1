import { cac } from 'cac';
import { packageVersion, typedValue, typedValues, unreachable, usageAsTyped } from '@runplan/common';
import { createDataDir } from './datadir.js';
import type { WorkdirError, WorkdirErrorReason } from './errors.js';
import { holdingDirectory } from './path-template.js';
import { prune } from './prune.js';
import { render, type TemplateVars } from './render.js';
import { createRunDir } from './run-dir.js';
import type { TemplateError } from './template.js';
import { isUntrusted, knownVariables, TIERS, variableSpec, type Tier } from './variables.js';

const EXIT_CODES = `  0  success
  1  refused or failed on the filesystem: the path exists unmarked, belongs to another run or
     template, is a symlink or file; a bad mark; the workdir of datadir is missing; mkdir,
     mark or removal failed (prune/datadir: printed paths were removed, the rest reported)
  2  usage or invalid input: unknown option or command, bad --var/--tier/--retain/--keep-runs,
     a template error (unknown_variable, not_allowed_in_tier, untrusted_variable,
     bad_identifier, unterminated, empty_reference, missing_value), varying_not_last,
     shared_workdir, not_absolute. Nothing is created or removed.`;

/** A usage problem found while reading arguments (exit 2). */
class UsageError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  now: Date;
}

export async function main(argv: string[]): Promise<number> {
  // A closed stdout (`workdir prune --json | head -1`) must not turn done work into a crash.
  process.stdout.on('error', () => {});
  if (argv[0] === '--version') {
    process.stdout.write(`workdir ${packageVersion(import.meta.url)}\n`);
    return 0;
  }
  const io: Io = {
    out: (line) => void process.stdout.write(`${line}\n`),
    err: (line) => void process.stderr.write(`${line}\n`),
    now: new Date(),
  };
  let code = 0;
  const cli = cac('workdir');
  const varOption = ['--var <NAME=VALUE>', 'a template value (repeatable), e.g. --var run.id=20261129T075500Z-4f2a'] as const;
  cli
    .command('render <template>', 'print the rendered text')
    .option(...varOption)
    .option('--tier <tier>', `workdir | pre_run | post_run (default workdir)`)
    .action(async (template: string) => {
      code = runRender(template, argv, io);
    });
  cli
    .command('create <template>', 'create the marked 0700 run directory; print its path')
    .option(...varOption)
    .option('--json', 'print {path, reused, shared} as JSON')
    .action(async (template: string, options: { json?: boolean }) => {
      code = await runCreate(template, argv, options, io);
    });
  cli
    .command('datadir <workdir>', 'create <workdir>/.harness-run/<run id>; print its path')
    .option('--run-id <id>', 'the run id (required)')
    .option('--keep-runs <n>', 'keep at most N datadirs, counting this one (N >= 1)')
    .option('--in-flight <path>', 'a datadir of a run in flight: never pruned (repeatable)')
    .option('--dry-run', 'report what --keep-runs would remove, remove nothing')
    .option('--json', 'print {path, reused, pruned, pruneFailed} as JSON')
    .action(async (workdir: string, options: { dryRun?: boolean; json?: boolean }) => {
      code = await runDataDir(workdir, argv, options, io);
    });
  cli
    .command('holding <template>', 'print the directory holding the run directories')
    .option(...varOption)
    .action(async (template: string) => {
      code = runHolding(template, argv, io);
    });
  cli
    .command('prune <template>', 'remove our run directories beyond the newest N; print each removed path')
    .option(...varOption)
    .option('--retain <n>', 'how many run directories to keep (required)')
    .option('--in-flight <path>', 'a run directory in flight: never removed (repeatable)')
    .option('--dry-run', 'print what would be removed, remove nothing')
    .option('--json', 'JSON Lines: every entry with its action (removed, would_remove, kept, failed) and reason')
    .action(async (template: string, options: { dryRun?: boolean; json?: boolean }) => {
      code = await runPrune(template, argv, options, io);
    });
  cli.help((sections) => [
    ...sections,
    {
      title: 'Variables',
      body: `  ${knownVariables().join(', ')}\n  run.date, run.time, run.started_at default to now (UTC); ~ at the start of a path template is $HOME`,
    },
    { title: 'Exit codes', body: EXIT_CODES },
  ]);
  try {
    cli.parse(['node', 'workdir', ...argv], { run: false });
    if (cli.options.help) return 0;
    if (!cli.matchedCommand) {
      const what = cli.args[0] === undefined ? 'no command given' : `unknown command ${JSON.stringify(cli.args[0])}`;
      throw new UsageError('usage', `${what} (render, create, datadir, holding, prune; see --help)`);
    }
    await cli.runMatchedCommand();
    return code;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`workdir: ${error.reason}: ${error.message}`);
      return 2;
    }
    if (error instanceof Error && error.name === 'CACError') {
      io.err(`workdir: usage: ${usageAsTyped(error.message, argv)} (see workdir --help)`);
      return 2;
    }
    io.err(`workdir: internal_error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

function runRender(template: string, argv: string[], io: Io): number {
  const tierText = typedValue(argv, 'tier') ?? 'workdir';
  if (!(TIERS as readonly string[]).includes(tierText)) {
    throw new UsageError('usage', `--tier ${JSON.stringify(tierText)} is not one of ${TIERS.join(', ')}`);
  }
  const rendered = render(template, readVars(argv, io.now), tierText as Tier);
  if (!rendered.ok) return reportTemplateError(rendered.error, io);
  io.out(rendered.value);
  return 0;
}

async function runCreate(template: string, argv: string[], options: { json?: boolean }, io: Io): Promise<number> {
  const created = await createRunDir(template, readVars(argv, io.now), { now: io.now });
  if (!created.ok) return reportError(created.error, template, io);
  io.out(options.json ? JSON.stringify(created.value) : created.value.path);
  return 0;
}

async function runDataDir(workdir: string, argv: string[], options: { dryRun?: boolean; json?: boolean }, io: Io): Promise<number> {
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

function runHolding(template: string, argv: string[], io: Io): number {
  const holding = holdingDirectory(template, readVars(argv, io.now));
  if (!holding.ok) return reportError(holding.error, template, io);
  io.out(holding.value);
  return 0;
}

async function runPrune(template: string, argv: string[], options: { dryRun?: boolean; json?: boolean }, io: Io): Promise<number> {
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

// One line naming reason, element and variable; then the hint, if any.
function reportError(error: WorkdirError, template: string | undefined, io: Io): number {
  // Template problems name the template (and the path element, unless the message already does).
  const where =
    template === undefined || error.path !== undefined
      ? ''
      : error.element !== undefined && !error.message.includes(JSON.stringify(error.element))
        ? `element ${JSON.stringify(error.element)} of ${JSON.stringify(template)}: `
        : `${JSON.stringify(template)}: `;
  io.err(`workdir: ${error.reason}: ${where}${error.message}`);
  if (error.hint !== undefined) io.err(`  hint: ${error.hint}`);
  return exitCodeFor(error.reason);
}

function reportTemplateError(error: TemplateError, io: Io): number {
  io.err(`workdir: ${error.reason}: in ${JSON.stringify(error.text)}: ${error.message}`);
  return 2;
}

// The one place a failure becomes an exit code.
export function exitCodeFor(reason: WorkdirErrorReason): 1 | 2 {
  switch (reason) {
    case 'unknown_variable':
    case 'not_allowed_in_tier':
    case 'untrusted_variable':
    case 'bad_identifier':
    case 'unterminated':
    case 'missing_value':
    case 'empty_reference':
    case 'varying_not_last':
    case 'shared_workdir':
    case 'not_absolute':
    case 'bad_retain':
      return 2;
    case 'exists_unmarked':
    case 'exists_other_run':
    case 'exists_other_template':
    case 'exists_not_directory':
    case 'bad_mark':
    case 'workdir_missing':
    case 'mkdir_failed':
    case 'mark_failed':
    case 'read_failed':
      return 1;
    default:
      return unreachable(reason);
  }
}

/**
 * `--var NAME=VALUE`, read from the raw argv: the option parser turns numeric-looking values
 * into numbers (`0042` → 42), and a value must reach the template exactly as typed.
 * Dates default to now (UTC).
 */
function readVars(argv: string[], now: Date): TemplateVars {
  const vars: Record<string, string> = {};
  for (const item of typedValues(argv, 'var')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError('usage', `--var ${JSON.stringify(item)} is not NAME=VALUE`);
    const name = item.slice(0, eq);
    if (!variableSpec(name) && !isUntrusted(name)) {
      throw new UsageError('unknown_variable', `--var ${name}: not a template variable (known: ${knownVariables().join(', ')})`);
    }
    if (Object.hasOwn(vars, name)) throw new UsageError('usage', `--var ${name} given twice`);
    vars[name] = item.slice(eq + 1);
  }
  const iso = now.toISOString();
  const date = iso.slice(0, 10);
  const time = iso.slice(11, 19).replaceAll(':', '');
  vars['run.date'] ??= date;
  vars['run.time'] ??= time;
  vars['run.started_at'] ??= `${date.replaceAll('-', '')}T${time}Z`;
  return vars;
}

function count(text: string, flag: string): number {
  if (!/^[0-9]+$/.test(text)) throw new UsageError('bad_retain', `${flag} ${JSON.stringify(text)} is not a non-negative integer`);
  return Number(text);
}
