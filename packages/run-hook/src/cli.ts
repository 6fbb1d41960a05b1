import { readFileSync } from 'node:fs';
import { cac } from 'cac';
import { asTyped, prepareArgv, packageVersion, parseCommandLineDuration, usageAsTyped } from '@runplan/common';
import { listenForSignals, processIdentity, type ProcessIdentity } from '@runplan/settle';
import { isUntrusted, knownVariables, type TemplateVars, variableSpec } from '@runplan/workdir';
import { exitCode, jsonOutcome, stderrLine } from './cli-output.js';
import type { HookTier } from './outcome.js';
import { executeHook, type HookRun } from './run.js';
import { flattenVars, parseAssignment } from './vars.js';

// For the bin: see releaseHungUpTerminals in @runplan/common.
export { releaseHungUpTerminals } from '@runplan/common';

const EXIT_CODES = [
  '  N    the hook exited N (0 only when it succeeded)',
  '  124  the hook passed its deadline (--timeout) and was torn down, even when KILL',
  '       was needed (GNU timeout exits 137 then; --json says teardown escalated)',
  '  125  run-hook itself failed: a usage error, a refused template or variable,',
  "       the hook's output it could not pass on (a full disk), or a teardown it",
  '       could not verify (125 outranks 124)',
  '  126  the hook could not be executed (permission)',
  '  127  the hook was not found',
  '  128+N  the hook was killed by signal N (or run-hook was interrupted by it)',
].join('\n');

/** A usage problem: reported as one line, exit 125, never a stack trace. */
class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

interface Request {
  template: string[];
  tier: HookTier;
  timeoutMs?: number;
  graceMs?: number;
  cwd?: string;
  vars: TemplateVars;
  json: boolean;
}

// run-hook's entry point: parses argv, runs the hook, returns the exit code.
export async function main(argv: string[]): Promise<number> {
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
  let request: Request | undefined;
  const cli = cac('run-hook');
  cli
    .command('[...template]', 'run a pre_run/post_run hook: render each argv element, exec it with the hook environment and a deadline')
    .usage('[options] -- ARGV_TEMPLATE...')
    .option('--tier <tier>', 'template tier and environment: pre_run or post_run', { default: 'pre_run' })
    .option('--timeout <dur>', 'deadline for the hook (500ms, 30s, 10m, 2h, 1d; a bare number is seconds; 0: none)', { default: '10m' })
    .option('--grace <dur>', 'after the deadline TERM, wait this long before KILL')
    .option('--cwd <dir>', 'working directory of the hook')
    .option('--var <name=value>', 'a template variable, e.g. --var run.id=r1 (repeatable, each name once; wins over --vars)')
    .option('--vars <file>', 'a JSON object of variables (dotted names, or nested objects)')
    .option('--json', 'after the hook is done, print its outcome as one JSON line on stdout')
    .option('--version', "print run-hook's version")
    .action((args: string[], options: Record<string, unknown>) => {
      request = toRequest(args, asTyped(argv, options, STRING_OPTIONS));
    });
  // One command and no subcommands: cac's command listing would only repeat the usage line.
  cli.help((sections) => [
    { body: 'run-hook: run one pre_run/post_run argv hook (never a shell) with the hook environment and a deadline' },
    ...sections.slice(1).filter((section) => section.title !== 'Commands' && !section.title?.startsWith('For more info')),
    { title: 'Exit codes', body: EXIT_CODES },
  ]);
  try {
    prepareArgv(cli, argv);
    const parsed = cli.parse(['node', 'run-hook', ...argv], { run: false });
    if (parsed.options.help) return 0;
    // `--version` anywhere among run-hook's own arguments (never after `--`), as settle reads it; `--help` outranks it.
    if (parsed.options.version) {
      process.stdout.write(`run-hook ${packageVersion(import.meta.url)}\n`);
      return 0;
    }
    await cli.runMatchedCommand();
  } catch (error) {
    if (error instanceof Error && (error.name === 'CACError' || error instanceof UsageError)) {
      const reason = error instanceof UsageError ? error.reason : 'usage';
      process.stderr.write(`run-hook: ${reason}: ${usageAsTyped(error.message, argv)}\n  hint: run-hook --help\n`);
      return 125;
    }
    throw error;
  }
  if (!request) return 125;
  return run(request);
}

// Runs the parsed request with interruption wired to SIGINT/SIGTERM/SIGHUP.
async function run(request: Request): Promise<number> {
  const controller = new AbortController();
  // As the settle CLI: INT, TERM, HUP and ALRM tear the hook's tree down (the abort reason
  // names the signal: exit 128+N); QUIT, USR1, USR2, PIPE, XCPU and XFSZ go to the hook's
  // process group; Ctrl-Z stops it with run-hook. Left to Node's defaults, QUIT, USR2 and
  // ALRM ended run-hook with the hook still running, and USR1 opened the inspector.
  let hook: ProcessIdentity | undefined;
  let tag: string | undefined;
  const stopListening = listenForSignals({ controller, child: () => hook, tag: () => tag, feedsStdin: false });
  let result: HookRun;
  try {
    result = await executeHook(request.template, {
      tier: request.tier,
      vars: request.vars,
      cwd: request.cwd,
      timeoutMs: request.timeoutMs,
      graceMs: request.graceMs,
      signal: controller.signal,
      stdout: process.stdout,
      stderr: process.stderr,
      onEvent: (event) => {
        if (event.type === 'settle' && event.event.type === 'spawned') {
          hook = processIdentity(event.event.pid);
          tag = event.event.tag;
        }
      },
    });
  } finally {
    stopListening();
  }
  const { outcome } = result;
  const line = stderrLine(outcome);
  if (line) process.stderr.write(`run-hook: ${outcome.reason}: ${line}\n`);
  if (request.json) {
    // The JSON line must be a line of its own even when the hook's output did not end one.
    const newline = outcome.stdoutTail !== '' && !outcome.stdoutTail.endsWith('\n') ? '\n' : '';
    await new Promise<void>((resolve) => process.stdout.write(`${newline}${JSON.stringify(jsonOutcome(result))}\n`, () => resolve()));
  }
  // A reader that went away (EPIPE) is the hook's business, as in a pipe. Any other write error
  // (ENOSPC: a full disk, EIO) lost the hook's output where the hook would have seen the error
  // itself: run-hook's own failure, as settle's.
  const lost = result.stdoutError as NodeJS.ErrnoException | undefined;
  if (lost !== undefined && lost.code !== 'EPIPE') {
    process.stderr.write(`run-hook: stdout_failed: the hook's output could not be written: ${lost.message}\n`);
    return 125;
  }
  return exitCode(result);
}

/** The string options, read back as typed (see @runplan/common's asTyped). */
const STRING_OPTIONS = { tier: 'tier', timeout: 'timeout', grace: 'grace', cwd: 'cwd', var: 'var', vars: 'vars' };

// Turns cac's parse into a request, or throws a UsageError naming the bad option.
function toRequest(args: string[], options: Record<string, unknown>): Request {
  if (args.length > 0) {
    throw new UsageError('usage', `unexpected ${JSON.stringify(String(args[0]))} before --; the hook argv goes after --`);
  }
  const template = ((options['--'] as unknown[] | undefined) ?? []).map(String);
  if (template.length === 0) throw new UsageError('usage', 'no hook argv: give it after --, e.g. run-hook -- ./check');
  const tier = single('tier', options.tier);
  if (tier !== 'pre_run' && tier !== 'post_run') {
    throw new UsageError('usage', `--tier ${JSON.stringify(tier)}: expected pre_run or post_run`);
  }
  const cwd = single('cwd', options.cwd);
  return {
    template,
    tier,
    timeoutMs: duration('timeout', options.timeout),
    graceMs: duration('grace', options.grace),
    ...(cwd === undefined ? {} : { cwd }),
    vars: readVars(options),
    json: options.json === true,
  };
}

// The variables from --vars (a file) and then --var (each wins over the file).
function readVars(options: Record<string, unknown>): TemplateVars {
  const vars: Record<string, string | number> = {};
  const file = single('vars', options.vars);
  if (file !== undefined) {
    let document: unknown;
    try {
      document = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new UsageError('bad_vars_file', `--vars ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const flat = flattenVars(document, `--vars ${file}`);
    if (!flat.ok) throw new UsageError(flat.error.reason, flat.error.message);
    // Its names are held to the table as --var's are: a typo in a file leaves a hook variable unset just the same.
    const unknown = Object.keys(flat.value).find((name) => !variableSpec(name) && !isUntrusted(name));
    if (unknown !== undefined) {
      const named = unknown.length > 80 ? `${unknown.slice(0, 80)}… (${unknown.length} characters)` : unknown;
      throw new UsageError('unknown_variable', `--vars ${file}: ${named}: not a template variable (known: ${knownVariables().join(', ')})`);
    }
    Object.assign(vars, flat.value);
  }
  const given = new Set<string>();
  for (const text of list(options.var)) {
    const assignment = parseAssignment(text);
    if (!assignment.ok) throw new UsageError(assignment.error.reason, assignment.error.message);
    const [name, value] = assignment.value;
    refuseVar(name, given);
    given.add(name);
    vars[name] = value;
  }
  return vars;
}

// A --var (as a --vars name) must name a template variable, and a --var once: a typo
// (`run.outcom`) would otherwise just leave its hook variable unset, and of two values one
// would silently win. As workdir refuses them.
// Only the command line is held to this: the library takes whatever vars its caller passes.
function refuseVar(name: string, given: ReadonlySet<string>): void {
  if (!variableSpec(name) && !isUntrusted(name)) {
    throw new UsageError('unknown_variable', `--var ${name}: not a template variable (known: ${knownVariables().join(', ')})`);
  }
  if (given.has(name)) throw new UsageError('usage', `--var ${name} given twice`);
}

function duration(name: string, value: unknown): number | undefined {
  const text = single(name, value);
  if (text === undefined) return undefined;
  const ms = parseCommandLineDuration(text);
  if (ms === undefined) {
    throw new UsageError('usage', `--${name} ${JSON.stringify(text)}: expected a duration like 500ms, 30s, 10m, 2h, 1d, or seconds`);
  }
  return ms;
}

// One value of an option that may be given once; mri turns numbers into numbers, so re-string.
function single(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new UsageError('usage', `--${name} given ${value.length} times; give it once`);
  if (value === true || value === false) throw new UsageError('usage', `--${name} needs a value`);
  return String(value);
}

function list(value: unknown): string[] {
  if (value === undefined) return [];
  const values = Array.isArray(value) ? value : [value];
  return values.map((v) => {
    if (v === true || v === false) throw new UsageError('usage', '--var needs NAME=VALUE');
    return String(v);
  });
}
