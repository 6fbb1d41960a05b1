import { usageAsTyped } from '@runplan/common';
import type { Readable, Writable } from 'node:stream';
import { helpText, settleVersion, usageLine } from './cli-help.js';
import { type Invocation, parse, specOf, UsageError } from './cli-invocation.js';
import { alarmAsTimeout, outcomeLine, preservedStatus } from './cli-outcome.js';
import { firstOutput, flushStdout, say } from './cli-output.js';
import { deliverReport, reportUnwritable } from './cli-report.js';
import { listenForSignals } from './cli-signals.js';
import { exitCodeFor } from './exit-code.js';
import { isAlive, processIdentity, type ProcessIdentity } from './identity.js';
import { passThrough } from './pass-through.js';
import { reportOf } from './report.js';
import { stream } from './stream.js';
import type { Execution } from './types.js';

export async function main(argv: string[]): Promise<number> {
  let inv: Invocation | 'help' | 'version';
  try {
    inv = await parse(argv);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof Error && error.name === 'CACError')) {
      say(process.stderr, `settle: usage: ${usageAsTyped(error.message, argv)}\n  hint: ${usageLine}\n`);
      return 125;
    }
    throw error;
  }
  if (inv === 'help' || inv === 'version') {
    say(process.stdout, inv === 'help' ? helpText : `settle ${settleVersion}\n`);
    return 0;
  }
  const unwritable = inv.report === undefined ? undefined : reportUnwritable(inv.report);
  if (unwritable !== undefined) {
    say(process.stderr, `settle: report_unwritable: --report ${inv.report}: ${unwritable}\n`);
    return 125;
  }

  const controller = new AbortController();
  let child: ProcessIdentity | undefined;
  let tag: string | undefined;
  const stopListening = listenForSignals({
    controller,
    child: () => child,
    tag: () => tag,
    feedsStdin: inv.input !== undefined && inv.input !== '-',
  });
  const spec = specOf(inv, controller.signal);
  // A broken stdout surfaces here only when the child wrote more, and that write would have
  // earned it SIGPIPE on a real pipe; our pipe to it is a socket, so we deliver the SIGPIPE.
  spec.onEvent = (event) => {
    if (event.type === 'spawned') {
      child = processIdentity(event.pid);
      tag = event.tag;
    }
  };
  // process.stdout is set up (a pipe or terminal handle) only once the child has written:
  // a command that prints nothing never pays for it at start-up.
  let out: Writable | undefined;
  let outFailed: Error | undefined;
  const consume = async (stdout: Readable) => {
    if (!(await firstOutput(stdout))) return;
    out = process.stdout;
    // SIGPIPE to the command's process group (the writer may be a grandchild: `sh -c 'yes'`),
    // and before the socket closes: after, the next write meets ECONNRESET first.
    const passed = await passThrough(stdout, out, () => {
      if (child && isAlive(child)) process.kill(-child.pid, 'SIGPIPE');
    });
    outFailed = passed.error;
  };
  const startedAt = Date.now();
  let execution: Execution;
  try {
    ({ execution } = await stream(spec, undefined, consume));
  } finally {
    stopListening();
  }
  const alarmed = execution.reason === 'interrupted' && execution.interruptSignal === 'SIGALRM';
  if (alarmed) execution = alarmAsTimeout(execution);
  let code = inv.preserveStatus ? preservedStatus(execution) : exitCodeFor(execution);
  const line = outcomeLine(inv, execution, alarmed);
  if (line) say(process.stderr, `${line}\n`);
  // A reader that went away (EPIPE) is the command's business, as in a pipe. Any other write
  // error (ENOSPC: a full disk, EIO) lost the command's output where the command would have
  // seen the error itself: settle's own failure, never the command's exit code.
  const outCode = (outFailed as NodeJS.ErrnoException | undefined)?.code;
  if (outFailed !== undefined && outCode !== 'EPIPE') {
    say(process.stderr, `settle: stdout_failed: the command's output could not be written: ${outFailed.message}\n`);
    code = 125;
  }
  if (inv.report !== undefined) {
    const delivered = await deliverReport(inv.report, reportOf(inv.command, execution, code));
    if (!delivered.ok) {
      say(process.stderr, `settle: report_unwritable: --report ${inv.report}: ${delivered.error}\n`);
      code = 125;
    } else if (delivered.value === process.stdout) out = delivered.value;
  }
  // What we already wrote waits for the reader, as it would in a pipe: at its pace after a
  // normal exit (until the deadline, if any), for `grace` after a teardown. Pending writes
  // hold the event loop open, so past that the only way out is to exit with the code decided.
  const normal = execution.reason === 'exited' || execution.reason === 'signaled';
  const deadlineLeft = inv.deadlineMs !== undefined ? startedAt + inv.deadlineMs - Date.now() : Infinity;
  const flushMs = normal ? Math.max(deadlineLeft, execution.graceMs) : execution.graceMs;
  if (out && !(await flushStdout(out, flushMs))) process.exit(code);
  return code;
}
