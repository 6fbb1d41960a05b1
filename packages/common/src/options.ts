/**
 * Reading option values exactly as the user typed them. cac's parser (mri) turns
 * numeric-looking values into numbers (`--retry 007` → 7, `--cwd 0042` → 42, `--jobs 1e3` →
 * 1000), which loses what was typed; every runplan CLI lets cac decide the shape of the
 * command line and then takes string options' values back from argv with this one reader.
 * It consumes arguments exactly as mri does, so the two always agree on how many values
 * there are: parsing stops at `--`; `--name=VALUE` takes VALUE; `--name` (or `--name=`)
 * takes the next argument unless there is none or it starts with `-` (then the option is a
 * bare flag and has no value). It loads nothing: settle's `settle -- CMD` path never pays for it.
 */

// Every value given to `--name` before `--`, as typed, in order.
export function typedValues(argv: readonly string[], name: string): string[] {
  const values: string[] = [];
  const flag = `--${name}`;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg.startsWith(`${flag}=`) && arg.length > flag.length + 1) {
      values.push(arg.slice(flag.length + 1));
      continue;
    }
    if (arg !== flag && arg !== `${flag}=`) continue;
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('-')) continue;
    values.push(next);
    i++;
  }
  return values;
}

// The last value given to `--name` before `--`, as typed (undefined when none was).
export function typedValue(argv: readonly string[], name: string): string | undefined {
  return typedValues(argv, name).at(-1);
}

/**
 * cac's parsed options with each string option's values replaced by the text typed.
 * `stringOptions` maps cac's camelCase key to the flag's name (`stateDir: 'state-dir'`).
 * A value cac took from a default (not in argv), or a flag given without a value (`true`),
 * is left as cac parsed it, so callers still see a missing value.
 */
export function asTyped(
  argv: readonly string[],
  options: Record<string, unknown>,
  stringOptions: Record<string, string>,
): Record<string, unknown> {
  const typed = { ...options };
  for (const [key, name] of Object.entries(stringOptions)) {
    const parsed = options[key];
    if (parsed === undefined) continue;
    const raw = typedValues(argv, name);
    if (raw.length !== (Array.isArray(parsed) ? parsed.length : 1)) continue;
    typed[key] = Array.isArray(parsed) ? raw : raw[0];
  }
  return typed;
}

/**
 * A cac usage message with the option named as the user typed it: cac reports an unknown
 * option by its camelCase key (`Unknown option \`--keepGoin\``, and `--no-x` as `--x`);
 * people look for what they typed (`--keep-goin`). Other messages are returned unchanged.
 */
export function usageAsTyped(message: string, argv: readonly string[]): string {
  const m = /^Unknown option `--?([^`]+)`$/.exec(message) ?? /^unknown option --(\S+)$/.exec(message);
  if (m === null) return message;
  const key = m[1]!;
  const camel = (name: string): string => name.replace(/-+([^-])/g, (_, c: string) => c.toUpperCase());
  for (const arg of argv) {
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.replace(/^-+/, '').split('=')[0]!;
    if (camel(name) === key || (name.startsWith('no-') && camel(name.slice(3)) === key)) {
      return `unknown option ${arg.split('=')[0]}`;
    }
  }
  return `unknown option --${key}`;
}

/**
 * What follows `--` made the command's operands, as POSIX has it (`--` ends the options):
 * cac keeps those arguments apart in `options['--']` and never hands them to the command's
 * `<arg>`s, so `runplan status -- nosuch` lost its slug and `journal cat -- FILE` missed its
 * file. Call after `cli.parse(…, { run: false })`, before `cli.runMatchedCommand()`: they are
 * appended to the positional arguments (cac then checks their count as for any others) and
 * taken out of `options['--']`. They stay operands: `cat -- --version` names a file.
 */
export function operandsAfterDashes(cli: { args: readonly string[]; options: Record<string, unknown> }): void {
  const after = cli.options['--'];
  if (!Array.isArray(after) || after.length === 0) return;
  cli.args = [...cli.args, ...after.map(String)];
  cli.options['--'] = [];
}

/** What kebabSwitches and dashLedValues read (and kebabSwitches extends) of a cac instance: every command's options. */
interface SwitchOwner {
  globalCommand: { options: DeclaredOption[] };
  commands: { options: DeclaredOption[] }[];
}

export interface DeclaredOption {
  rawName: string;
  names: string[];
  isBoolean?: boolean;
  negated: boolean;
}

// An option's flags as typed (`-k, --kill-after <d>` → `-k`, `--kill-after`).
const flagsOf = (option: DeclaredOption): string[] => option.rawName.split(',').map((part) => part.trim().split(/[\s=]/)[0]!);

// Every option declared on the CLI, global and per command, with its flags as typed (`-k`, `--kill-after`).
function* declaredOptions(cli: SwitchOwner): Generator<{ option: DeclaredOption; flags: string[] }> {
  for (const command of [cli.globalCommand, ...cli.commands])
    for (const option of command.options) yield { option, flags: flagsOf(option) };
}

// Whether an option takes a value (`--jobs <n>`, `--out [file]`) rather than being a switch.
const takesAValue = (option: DeclaredOption) => option.isBoolean !== true && /[<[]/.test(option.rawName);

/**
 * Makes every two-word switch (`--dry-run`, `--keep-going`) a switch for the parser too. cac
 * tells its parser (mri) which options take no value by their camelCase key (`dryRun`), while
 * mri reads the argument by the name as typed (`dry-run`): taken for an option with a value,
 * the switch swallowed the argument after it — `runplan run --dry-run plan.toml` lost its
 * plan, `workdir prune --dry-run TEMPLATE` its template, `settle --preserve-status 2s …` the
 * `2s`. Adding the typed name to the option's names makes it an alias mri knows is a switch.
 * Call once every option is declared, before `cli.parse`.
 */
export function kebabSwitches(cli: SwitchOwner): void {
  for (const { option, flags } of declaredOptions(cli)) {
    if (option.isBoolean !== true || option.negated) continue;
    for (const flag of flags) {
      const name = flag.replace(/^-{1,2}/, '');
      if (name.includes('-') && !option.names.includes(name)) option.names.push(name);
    }
  }
}

/** A word that can only be a value: a lone `-` (stdin/stdout), or one that starts like a negative number. */
const dashLedValue = /^-(?:$|\d|\.\d)/;

/**
 * `--jobs -1`, `--grace -1s`, `--out -`, `-k -5`: a dash-led value given to an option that
 * takes one, rewritten as `--jobs=-1` (and `-k=-5`) so the parser sees it as that option's
 * value. mri reads such a word as options of its own — `--jobs -1` failed with "unknown
 * option -1" instead of saying what is wrong with -1, and a lone `-` came out as no value —
 * where POSIX getopt hands an option that requires an argument the next word. Only words
 * that cannot be an option are joined: `--repo --json` is still a missing value. Stops at
 * `--` (what follows belongs to the command). Call once every option is declared, and give
 * the rewritten words to everything that reads the command line (asTyped, usageAsTyped).
 */
export function dashLedValues(cli: SwitchOwner, argv: readonly string[]): string[] {
  const takesValue = new Set<string>();
  const switches = new Set<string>();
  for (const { option, flags } of declaredOptions(cli)) for (const flag of flags) (takesAValue(option) ? takesValue : switches).add(flag);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') return [...out, ...argv.slice(i)];
    const next = argv[i + 1];
    if (takesValue.has(word) && next !== undefined && dashLedValue.test(next)) {
      out.push(`${word}=${next}`);
      i++;
    } else out.push(...attachedValue(word, takesValue, switches));
  }
  return out;
}

// `-s9`, `-sKILL`, `-pk0`: short switches, then a short option with its value attached in the
// same word, as getopt reads them (`timeout -s9`) — split to `-p`, `-k=0`. mri read the value's
// letters as options of their own (`unknown option --9`). Any other word is left as it is.
function attachedValue(word: string, takesValue: ReadonlySet<string>, switches: ReadonlySet<string>): string[] {
  if (!/^-[A-Za-z]/.test(word)) return [word];
  const flags: string[] = [];
  for (let j = 1; j < word.length; j++) {
    const flag = `-${word[j]}`;
    if (takesValue.has(flag)) return j + 1 < word.length ? [...flags, `${flag}=${word.slice(j + 1)}`] : [word];
    if (!switches.has(flag)) return [word];
    flags.push(flag);
  }
  return [word];
}

/**
 * What every CLI does once its options are declared and before `cli.parse`: two-word switches
 * known to the parser (kebabSwitches), then the command line's dash-led values joined to their
 * options (dashLedValues), rewritten in place so every later reader of argv sees the same words.
 */
export function prepareArgv(cli: SwitchOwner, argv: string[]): void {
  kebabSwitches(cli);
  argv.splice(0, argv.length, ...dashLedValues(cli, argv));
}

/**
 * The first of `options` that takes a value and is given more than once among the words
 * before `--` (`--jobs 2 --jobs 3`, `--repo=A --repo B`), named by its last flag; undefined
 * when none is. Flags in `repeatable` may be given any number of times.
 */
export function repeatedValueOption(
  options: readonly DeclaredOption[],
  argv: readonly string[],
  repeatable: ReadonlySet<string>,
): { flag: string; times: number } | undefined {
  const end = argv.indexOf('--');
  const words = end === -1 ? argv : argv.slice(0, end);
  for (const option of options) {
    const flags = flagsOf(option);
    if (!takesAValue(option) || flags.some((flag) => repeatable.has(flag))) continue;
    const times = words.filter((w) => flags.some((flag) => w === flag || w.startsWith(`${flag}=`))).length;
    if (times > 1) return { flag: flags.at(-1)!, times };
  }
  return undefined;
}
