import { createInterface } from 'node:readline';
import { cac } from 'cac';
import { packageVersion, parseDuration, typedValue, typedValues, unreachable } from '@runplan/common';
import type { JournalError, JournalErrorReason } from './errors.js';
import { JournalFailure } from './errors.js';
import { isPlainObject, type JournalRecord } from './format.js';
import { describeHolder, isLockHeld, readLockHolder } from './lock.js';
import { repairJournal } from './repair.js';
import { scanJournal, type ScanResult } from './scan.js';
import { describeStatus, type JournalStatus } from './status.js';
import { identityPathFor, openWriter, pathProblem, recordProblem, recordProblemBeforeOpen, type JournalWriter } from './writer.js';

const EXIT_CODES = `  0  success (validate: clean; holder: someone holds the lock)
  1  a negative answer: validate found a torn tail (repairable with journal repair); holder: nobody holds the lock
  2  usage or invalid input: unknown flag, bad duration, --data or a stdin line not a JSON object, bad record type, record over 1 MiB, bad or missing journal path, a run id that is not an identifier or not the journal's
  3  refused or failed: the journal is corrupt (nothing was changed), already ends with its terminal record, already exists (init), or a write/sync failed (every record acknowledged before it is durable)
  4  the writer lock is held by a live process (after --wait), or was taken on another host (--break-lock overrides)`;

const DEFAULT_WAIT = '10s';

// Exit code of every refusal: one switch, exhaustive.
function exitCodeFor(reason: JournalErrorReason): number {
  switch (reason) {
    case 'lock_held':
    case 'foreign_host':
      return 4;
    case 'corrupt':
    case 'terminal':
    case 'exists':
    case 'io_error':
    case 'closed':
      return 3;
    case 'missing':
    case 'bad_path':
    case 'bad_record':
    case 'bad_run_id':
    case 'record_too_large':
      return 2;
    default:
      return unreachable(reason);
  }
}

function hintFor(error: JournalError): string | undefined {
  switch (error.reason) {
    case 'lock_held':
      return 'another writer is appending: wait longer (--wait 1m) or stop it; the lock frees itself when that process exits';
    case 'foreign_host':
      return 'a lock taken on another host cannot be checked from here; if that writer is gone, pass --break-lock';
    case 'corrupt':
      return `the journal fails closed and was not changed; inspect it with: cut -c10- ${error.path} | jq -c .`;
    case 'terminal':
      return 'the run this journal records has ended; start a new journal for new work';
    case 'exists':
      return 'append to it with journal append, or pick another file';
    case 'io_error':
      return `every record acknowledged before the error is durable; journal validate ${error.path} shows the last one`;
    case 'missing':
      return 'create it with journal init FILE --run-id ID, or append without --no-create';
    case 'record_too_large':
      return 'store big evidence in a file and journal its path';
    case 'bad_path':
    case 'bad_record':
    case 'bad_run_id':
    case 'closed':
      return undefined;
    default:
      return unreachable(error);
  }
}

function say(reason: string, message: string, hint?: string): void {
  process.stderr.write(`journal: ${reason}: ${message}\n${hint ? `  hint: ${hint}\n` : ''}`);
}

// Reports a refusal and returns its exit code.
function fail(error: JournalError): number {
  say(error.reason, error.message, hintFor(error));
  return exitCodeFor(error.reason);
}

class UsageError extends Error {
  override name = 'UsageError';
}

function waitMsFrom(argv: string[]): number {
  const text = typedValue(argv, 'wait') ?? DEFAULT_WAIT;
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`--wait ${JSON.stringify(text)} is not a duration (500ms, 30s, 10m, 2h)`);
  return ms;
}

function fileArg(file: unknown): string {
  const error = pathProblem(typeof file === 'string' ? file : undefined);
  if (error) throw new JournalFailure(error);
  return file as string;
}

function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new JournalFailure({ reason: 'bad_record', path: '', message: `${what} is not JSON: ${text.slice(0, 80)}` });
  }
  if (!isPlainObject(value))
    throw new JournalFailure({ reason: 'bad_record', path: '', message: `${what} is not a JSON object: ${text.slice(0, 80)}` });
  return value;
}

// Scans a journal, reporting a missing file as a refusal.
async function scanOrFail(file: string, options?: Parameters<typeof scanJournal>[1]): Promise<ScanResult> {
  try {
    return await scanJournal(file, options);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new JournalFailure({ reason: 'missing', path: file, message: `${file} does not exist` });
    throw new JournalFailure({
      reason: 'io_error',
      path: file,
      message: `reading ${file} failed: ${(e as Error).message}`,
      ...(code ? { code } : {}),
    });
  }
}

function statusJson(file: string, scan: ScanResult): Record<string, unknown> {
  const { kind, ...where } = scan.status;
  return {
    path: file,
    status: kind,
    ...where,
    count: scan.count,
    lastSeq: scan.lastSeq,
    terminal: scan.terminal,
    ...(scan.header ? { runId: scan.header.runId } : {}),
  };
}

function reportStatus(file: string, status: JournalStatus): void {
  if (status.kind === 'torn_tail')
    say(
      'torn_tail',
      describeStatus(file, status),
      status.detail === 'empty'
        ? `it holds nothing: remove it, or journal append ${file} writes its header`
        : `journal repair ${file} keeps a .broken copy and cuts the torn line`,
    );
  if (status.kind === 'corrupt')
    say(
      'corrupt',
      describeStatus(file, status),
      `the journal fails closed; nothing was changed; inspect it with: cut -c10- ${file} | jq -c .`,
    );
}

async function init(argv: string[], file: string): Promise<number> {
  const runId = typedValue(argv, 'run-id');
  if (runId === undefined) throw new UsageError('init needs --run-id ID');
  const opened = await openWriter(file, { create: true, exclusive: true, runId, waitMs: waitMsFrom(argv) });
  if (!opened.ok) return fail(opened.error);
  await opened.value.close();
  return 0;
}

async function append(
  argv: string[],
  file: string,
  options: { terminal?: boolean; create?: boolean; breakLock?: boolean },
): Promise<number> {
  const type = typedValue(argv, 'type');
  if (type === undefined) throw new UsageError('append needs --type TYPE');
  const dataText = typedValue(argv, 'data');
  const data = dataText === undefined ? undefined : parseObject(dataText, '--data');
  const waitMs = waitMsFrom(argv);
  const runId = typedValue(argv, 'run-id');
  const terminal = Boolean(options.terminal);
  // Input that can never be appended is refused before the journal is opened (or created).
  const refused = data === undefined ? recordProblem(file, type, {}) : recordProblemBeforeOpen(file, type, data, terminal);
  if (refused) return fail(refused);
  const state: { writer?: JournalWriter } = {};
  // Opens the writer on first use: with stdin, only once there is a record to append.
  const open = async (): Promise<JournalWriter> => {
    if (state.writer) return state.writer;
    const opened = await openWriter(file, {
      create: options.create !== false,
      waitMs,
      ...(runId !== undefined ? { runId } : {}),
      ...(options.breakLock ? { breakLock: true } : {}),
      onEvent: (event) => {
        if (event.type === 'lock-waiting')
          process.stderr.write(
            `journal: lock_waiting: ${file} is held by ${describeHolder(event.holder)}; waiting up to ${typedValue(argv, 'wait') ?? DEFAULT_WAIT}\n`,
          );
        if (event.type === 'journal-repaired')
          process.stderr.write(
            `journal: repaired: cut a torn tail of ${event.droppedBytes} bytes at byte ${event.truncatedAt}; the whole file was kept in ${event.brokenCopy}\n`,
          );
      },
    });
    if (!opened.ok) throw new JournalFailure(opened.error);
    state.writer = opened.value;
    return state.writer;
  };
  try {
    if (data !== undefined) {
      const writer = await open();
      const record = await (terminal ? writer.appendTerminal(type, data) : writer.append(type, data));
      process.stdout.write(`${record.seq}\n`);
      return 0;
    }
    return await appendStdinLines(open, file, type, terminal);
  } catch (e) {
    if (e instanceof JournalFailure) return fail(e.error);
    throw e;
  } finally {
    await state.writer?.close();
  }
}

// One record per JSON line on stdin, group-committed; prints each seq, in order, as soon as
// it is durable. With --terminal the last line is the terminal record. A bad line stops
// the input: the records before it stay appended (their seqs are printed), exit code 2.
// The writer is opened at the first record, so input with none creates nothing.
async function appendStdinLines(open: () => Promise<JournalWriter>, file: string, type: string, terminal: boolean): Promise<number> {
  let printed: Promise<void> = Promise.resolve();
  let outstanding = 0;
  let failure: unknown;
  const track = (pending: Promise<JournalRecord>) => {
    pending.catch(() => {}); // awaited in order below; a poisoned writer rejects them all
    outstanding += 1;
    printed = printed.then(async () => {
      try {
        const record = await pending;
        if (failure === undefined) process.stdout.write(`${record.seq}\n`);
      } catch (e) {
        failure ??= e;
      } finally {
        outstanding -= 1;
      }
    });
  };
  let held: Record<string, unknown> | undefined;
  let lineNumber = 0;
  let badLine: JournalError | undefined;
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    lineNumber += 1;
    if (failure !== undefined) break;
    if (line.trim() === '') continue;
    let data: Record<string, unknown>;
    try {
      data = parseObject(line, `stdin line ${lineNumber}`);
    } catch (e) {
      badLine = (e as JournalFailure).error;
      break;
    }
    const tooBig = recordProblemBeforeOpen(file, type, data, false);
    if (tooBig) {
      badLine = { ...tooBig, message: `stdin line ${lineNumber}: ${tooBig.message}` } as JournalError;
      break;
    }
    if (terminal) {
      if (held !== undefined) track((await open()).append(type, held));
      held = data;
    } else track((await open()).append(type, data));
    if (outstanding > 256) await printed; // bounded memory
  }
  lines.close();
  if (!badLine && failure === undefined && terminal) {
    if (held === undefined) throw new UsageError('--terminal needs a record: pass --data JSON or a JSON line on stdin');
    track((await open()).appendTerminal(type, held));
  }
  await printed;
  if (failure !== undefined) throw failure;
  if (badLine) return fail({ ...badLine, path: file });
  return 0;
}

async function cat(argv: string[], file: string): Promise<number> {
  const types = new Set(typedValues(argv, 'type'));
  const sinceText = typedValue(argv, 'since');
  const since = sinceText === undefined ? 0 : Number(sinceText);
  if (!/^\d+$/.test(sinceText ?? '0') || !Number.isSafeInteger(since))
    throw new UsageError(`--since ${JSON.stringify(sinceText)} is not a seq (a non-negative integer)`);
  // Validate first so a corrupt journal prints nothing; then print exactly the bytes
  // validated (records appended meanwhile wait for the next cat).
  const first = await scanOrFail(file);
  if (first.status.kind === 'corrupt') {
    reportStatus(file, first.status);
    return 3;
  }
  let out: string[] = [];
  let outBytes = 0;
  const flush = () => {
    if (out.length > 0) process.stdout.write(out.join(''));
    out = [];
    outBytes = 0;
  };
  await scanOrFail(file, {
    size: first.validEnd,
    onRecord: (record, json) => {
      if (record.seq < since || (types.size > 0 && !types.has(record.type))) return;
      out.push(`${json.toString('utf8')}\n`);
      outBytes += json.length + 1;
      if (outBytes > 64 * 1024) flush();
    },
  });
  flush();
  if (first.status.kind === 'torn_tail' && first.size > 0)
    say('torn_tail', `${describeStatus(file, first.status)}; printed the ${first.count} records before it`, `journal repair ${file}`);
  return 0;
}

async function validate(file: string, options: { json?: boolean }): Promise<number> {
  const scan = await scanOrFail(file);
  if (options.json) process.stdout.write(`${JSON.stringify(statusJson(file, scan))}\n`);
  switch (scan.status.kind) {
    case 'clean':
      if (!options.json)
        process.stdout.write(`${file}: clean: ${scan.count} records, last seq ${scan.lastSeq}${scan.terminal ? ', terminal' : ''}\n`);
      return 0;
    case 'torn_tail':
      reportStatus(file, scan.status);
      return 1;
    case 'corrupt':
      reportStatus(file, scan.status);
      return 3;
    default:
      return unreachable(scan.status);
  }
}

async function repair(argv: string[], file: string, options: { breakLock?: boolean; json?: boolean }): Promise<number> {
  const result = await repairJournal(file, { waitMs: waitMsFrom(argv), ...(options.breakLock ? { breakLock: true } : {}) });
  if (!result.ok) return fail(result.error);
  if (options.json) process.stdout.write(`${JSON.stringify({ path: file, ...result.value })}\n`);
  else if ('clean' in result.value) process.stdout.write(`${file}: clean, nothing to repair\n`);
  else
    process.stdout.write(
      `${file}: cut ${result.value.droppedBytes} torn bytes at byte ${result.value.truncatedAt}; the whole file was kept in ${result.value.brokenCopy}\n`,
    );
  return 0;
}

// Who holds the writer lock: answered by connect(), so asking never takes the lock.
async function holder(file: string): Promise<number> {
  const identityPath = identityPathFor(file);
  if (!(await isLockHeld(file))) {
    const stale = readLockHolder(identityPath);
    say(
      'not_held',
      `nobody holds the writer lock of ${file}`,
      stale ? `${identityPath} still names ${describeHolder(stale)}, which no longer holds it` : undefined,
    );
    return 1;
  }
  const identity = readLockHolder(identityPath);
  process.stdout.write(`${JSON.stringify(identity ?? { held: true, identity: null })}\n`);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  process.stdout.on('error', () => {}); // a closed stdout (| head -1) must not crash us
  if (argv[0] === '--version') {
    process.stdout.write(`journal ${packageVersion(import.meta.url)}\n`);
    return 0;
  }
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
    .option('--type <type>', 'Record type, kebab-case (required)')
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
  cli.help((sections) => {
    sections.push({ title: 'Exit codes', body: EXIT_CODES });
    sections.push({ title: 'Example', body: '  journal cat run.jsonl --type checkpoint | jq -r .data.taskId' });
  });
  try {
    const parsed = cli.parse(['node', 'journal', ...argv], { run: false });
    if (parsed.options['help']) return 0;
    if (!cli.matchedCommand) {
      const name = parsed.args[0];
      say(
        'usage',
        name === undefined ? 'no command given' : `unknown command ${JSON.stringify(String(name))}`,
        'journal --help lists the commands',
      );
      return 2;
    }
    await cli.runMatchedCommand();
    return exitCode;
  } catch (e) {
    if (e instanceof Error && (e.name === 'CACError' || e instanceof UsageError)) {
      say('usage', e.message, 'journal --help');
      return 2;
    }
    if (e instanceof JournalFailure) return fail(e.error);
    say('io_error', e instanceof Error ? e.message : String(e));
    return 3;
  }
}
