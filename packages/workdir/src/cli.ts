import { cac } from 'cac';
import { prepareArgv, operandsAfterDashes, packageVersion, repeatedValueOption, usageAsTyped } from '@runplan/common';
import { UsageError } from './cli-args.js';
import { type Io, runCreate, runDataDir, runHolding, runPrune, runRender } from './cli-commands.js';
import { EXIT_CODES } from './cli-failure.js';
import { knownVariables } from './variables.js';

/** Options meant to repeat: each `--var` names its own variable (checked on its own), each `--in-flight` one more path. */
const REPEATABLE: ReadonlySet<string> = new Set(['--var', '--in-flight']);

export async function main(argv: string[]): Promise<number> {
  // A closed stdout (`workdir prune --json | head -1`) must not turn done work into a crash.
  process.stdout.on('error', () => {});
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
  cli.option('--version', 'print the version');
  cli.help((sections) => [
    ...sections,
    {
      title: 'Variables',
      body: `  ${knownVariables().join(', ')}\n  run.date, run.time, run.started_at default to now (UTC); ~ at the start of a path template is $HOME`,
    },
    { title: 'Exit codes', body: EXIT_CODES },
  ]);
  try {
    prepareArgv(cli, argv);
    cli.parse(['node', 'workdir', ...argv], { run: false });
    if (cli.options.help) return 0;
    // `--version` anywhere among workdir's own arguments (never after `--`), as settle reads it; `--help` outranks it.
    if (cli.options.version) {
      process.stdout.write(`workdir ${packageVersion(import.meta.url)}\n`);
      return 0;
    }
    if (!cli.matchedCommand) {
      const what = cli.args[0] === undefined ? 'no command given' : `unknown command ${JSON.stringify(cli.args[0])}`;
      throw new UsageError('usage', `${what} (render, create, datadir, holding, prune; see --help)`);
    }
    // A value option given twice (`prune --retain 20 --retain 0`) is refused, as in the other
    // four tools: the last one was taken silently, and for --retain that decides what is removed.
    const repeated = repeatedValueOption([...cli.globalCommand.options, ...cli.matchedCommand.options], argv, REPEATABLE);
    if (repeated !== undefined) throw new UsageError('usage', `${repeated.flag} given ${repeated.times} times; give it once`);
    operandsAfterDashes(cli);
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
