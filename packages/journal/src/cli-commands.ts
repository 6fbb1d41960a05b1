import { createInterface } from 'node:readline';
import { typedValue, typedValues, unreachable } from '@runplan/common';
import type { JournalError } from './errors.js';
import { JournalFailure } from './errors.js';
import type { JournalRecord } from './format.js';
import { describeHolder, isLockHeld, readLockHolder } from './lock.js';
import { repairJournal } from './repair.js';
import { describeStatus } from './status.js';
import { openWriter } from './open.js';
import { recordProblem, recordProblemBeforeOpen } from './input-check.js';
import { identityPathFor, type JournalWriter } from './writer.js';
import { DEFAULT_WAIT, say, fail, UsageError, waitMsFrom, parseObject, scanOrFail, statusJson, reportStatus } from './cli-support.js';

// The journal CLI's commands: each takes its arguments and returns the exit code.

export async function init(argv: string[], file: string): Promise<number> {
  const runId = oneValue(argv, 'run-id');
  if (runId === undefined) throw new UsageError('init needs --run-id ID');
  const opened = await openWriter(file, { create: true, exclusive: true, runId, waitMs: waitMsFrom(argv) });
  if (!opened.ok) return fail(opened.error);
  await opened.value.close();
  return 0;
}

// The one value of an option init and append take once: a second --data (or --type, --run-id)
// is refused, never dropped — one --data is one record; more come one JSON object a line on stdin.
function oneValue(argv: string[], name: string): string | undefined {
  const values = typedValues(argv, name);
  if (values.length > 1)
    throw new UsageError(`--${name} given ${values.length} times: give it once (more records: one JSON object a line on stdin)`);
  return values[0];
}

export async function append(
  argv: string[],
  file: string,
  options: { terminal?: boolean; create?: boolean; breakLock?: boolean },
): Promise<number> {
  const type = oneValue(argv, 'type');
  if (type === undefined) throw new UsageError('append needs --type TYPE');
  const dataText = oneValue(argv, 'data');
  const data = dataText === undefined ? undefined : parseObject(dataText, '--data');
  const waitMs = waitMsFrom(argv);
  const runId = oneValue(argv, 'run-id');
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
export async function appendStdinLines(open: () => Promise<JournalWriter>, file: string, type: string, terminal: boolean): Promise<number> {
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

export async function cat(argv: string[], file: string): Promise<number> {
  const types = new Set(typedValues(argv, 'type'));
  const sinceText = typedValue(argv, 'since');
  const since = sinceText === undefined ? 0 : Number(sinceText);
  if (!/^\d+$/.test(sinceText ?? '0') || !Number.isSafeInteger(since))
    throw new UsageError(`--since ${JSON.stringify(sinceText)} is not a seq (a non-negative integer)`);
  // Validate first so a corrupt journal prints nothing; then print exactly the bytes
  // validated (records appended meanwhile wait for the next cat). Every record is parsed
  // and its shape checked here, as the printing pass does: a record with a valid checksum
  // but no object `data` passed the checksum-only check, and the printing pass stopped
  // there, so cat printed the records before it and exited 0 without a word.
  const first = await scanOrFail(file, { parse: true });
  if (first.size === 0) throw emptyJournal(file);
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
  if (first.status.kind === 'torn_tail')
    say('torn_tail', `${describeStatus(file, first.status)}; printed the ${first.count} records before it`, `journal repair ${file}`);
  return 0;
}

export async function validate(file: string, options: { json?: boolean }): Promise<number> {
  const scan = await scanOrFail(file);
  if (scan.size === 0) throw emptyJournal(file);
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

// An empty file holds no record, not even a header: nothing repair could cut, so cat and
// validate answer it as repair and append --no-create do (missing), never as a torn tail
// whose hint (journal repair) would only get the same answer. A journal is created whole
// (temp file, then link), so a reader never meets an empty one that is still being created.
function emptyJournal(file: string): JournalFailure {
  return new JournalFailure({
    reason: 'missing',
    path: file,
    message: `${file} is empty: it has no header, so there is nothing to repair`,
  });
}

export async function repair(argv: string[], file: string, options: { breakLock?: boolean; json?: boolean }): Promise<number> {
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
export async function holder(file: string): Promise<number> {
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
