import { cac } from 'cac';
import { prepareArgv, operandsAfterDashes, packageVersion, repeatedValueOption, usageAsTyped } from '@runplan/common';
import { JournalFailure } from './errors.js';
import { init, append, cat, validate, repair, holder } from './cli-commands.js';
import { EXIT_CODES, DEFAULT_WAIT, say, fail, UsageError, fileArg } from './cli-support.js';

// For the bin: see releaseHungUpTerminals in @runplan/common.
export { releaseHungUpTerminals } from '@runplan/common';

const ONE_VALUE_CHECKED_BY_COMMAND: ReadonlySet<string> = new Set(['--type', '--data', '--run-id']);

export async function main(argv: string[]): Promise<number> {
  process.stdout.on('error', () => {}); // a closed stdout (| head -1) must not crash us
  const cli = cac('journal');
  let exitCode = 0;
  const run =
    <A extends unknown[]>(action: (...args: A) => Promise<number>) =>
    async (...args: A) => {
      exitCode = await action(...args);
    };
  cli
    .command('init <file>', 'Create a journal holding only its header (fails if it exists)')
    .option('--run-id <id>', 'Run id written in the header (required; [A-Za-z0-9][A-Za-z0-9._-]*)')
    .option('--wait <duration>', 'Wait this long for the writer lock', { default: DEFAULT_WAIT })
    .action(run((file: unknown) => init(argv, fileArg(file))));
  cli
    .command('append <file>', 'Append a record (--data), or one record per JSON line on stdin; prints each seq once durable')
    .option('--type <type>', 'Record type: letters, digits, ".", "_", ":", "-" (required)')
    .option('--data <json>', 'Record data, a JSON object (without it: one record per stdin line)')
    .option('--terminal', 'Make the (last) record the terminal receipt; nothing may follow it')
    .option('--wait <duration>', 'Wait this long for a live writer before exit 4', { default: DEFAULT_WAIT })
    .option('--no-create', 'Refuse when the journal does not exist (default: create it with a header)')
    .option('--run-id <id>', 'Run id for the header when this creates the journal (default: generated)')
    .option('--break-lock', 'Take the lock even when it was taken on another host')
    .action(
      run((file: unknown, options: { terminal?: boolean; create?: boolean; breakLock?: boolean }) => append(argv, fileArg(file), options)),
    );
  cli
    .command('cat <file>', 'Print the records as plain JSON Lines, header included (a corrupt journal prints nothing)')
    .option('--type <type>', 'Only records of this type (repeatable)')
    .option('--since <seq>', 'Only records with seq >= SEQ')
    .action(run((file: unknown) => cat(argv, fileArg(file))));
  cli
    .command('validate <file>', 'Check every line: 0 clean, 1 torn tail, 3 corrupt (names byte offset and seq)')
    .option('--json', 'Print the verdict as one JSON line')
    .action(run((file: unknown, options: { json?: boolean }) => validate(fileArg(file), options)));
  cli
    .command('repair <file>', 'Cut a torn tail (keeps FILE.broken) and journal that it did; refuses corruption and changes nothing')
    .option('--wait <duration>', 'Wait this long for the writer lock', { default: DEFAULT_WAIT })
    .option('--break-lock', 'Take the lock even when it was taken on another host')
    .option('--json', 'Print what was done as one JSON line')
    .action(run((file: unknown, options: { breakLock?: boolean; json?: boolean }) => repair(argv, fileArg(file), options)));
  cli
    .command('holder <file>', 'Print the identity of the writer-lock holder as JSON (exit 1 if nobody); never takes the lock')
    .action(run((file: unknown) => holder(fileArg(file))));
  cli.option('--version', 'Print the version');
  cli.help((sections) => {
    sections.push({ title: 'Exit codes', body: EXIT_CODES });
    sections.push({ title: 'Example', body: '  journal cat run.jsonl --type checkpoint | jq -r .data.taskId' });
  });
  try {
    prepareArgv(cli, argv);
    const parsed = cli.parse(['node', 'journal', ...argv], { run: false });
    if (parsed.options['help']) return 0;
    // `--version` anywhere among journal's own arguments (never after `--`), as settle reads it; `--help` outranks it.
    if (parsed.options['version']) {
      process.stdout.write(`journal ${packageVersion(import.meta.url)}\n`);
      return 0;
    }
    if (!cli.matchedCommand) {
      const name = parsed.args[0];
      say(
        'usage',
        name === undefined ? 'no command given' : `unknown command ${JSON.stringify(String(name))}`,
        'journal --help lists the commands',
      );
      return 2;
    }
    // A value option given twice (`cat --since 1 --since 5`, `--wait 1s --wait 1m`) is refused, as in
    // runplan, settle and run-hook: which one won was the last one, silently. `cat --type` repeats;
    // append's and init's --type, --data and --run-id are refused by the command with its own hint.
    const repeated = repeatedValueOption([...cli.globalCommand.options, ...cli.matchedCommand.options], argv, ONE_VALUE_CHECKED_BY_COMMAND);
    if (repeated !== undefined) throw new UsageError(`${repeated.flag} given ${repeated.times} times; give it once`);
    operandsAfterDashes(cli);
    await cli.runMatchedCommand();
    return exitCode;
  } catch (e) {
    if (e instanceof Error && (e.name === 'CACError' || e instanceof UsageError)) {
      say('usage', usageAsTyped(e.message, argv), 'journal --help');
      return 2;
    }
    if (e instanceof JournalFailure) return fail(e.error);
    say('io_error', e instanceof Error ? e.message : String(e));
    return 3;
  }
}
