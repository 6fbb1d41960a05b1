import { classify, FORENSIC, flagValues, launches, type Classified } from './classify.js';
import type { HookInput } from './input.js';
import { expandHome, liveRuns, stateRoots, touchesRoot, type LiveRun } from './live.js';
import { resolve } from 'node:path';
import { grepToolReaches, walksIntoRoot } from './recursive.js';
import { ShellSyntaxError, type SimpleCommand } from './shell.js';

/** The gate's answer: allow (exit 0) or deny with a reason slug and what to do instead (exit 2). */
export type Decision = { kind: 'allow' } | { kind: 'deny'; reason: GateReason; message: string; hint: string };

export type GateReason = 'background_launch' | 'coordinator_live' | 'unreadable_command';

const FOREGROUND_HINT =
  'run `runplan run PLAN` in the foreground; it blocks until the run ends and its exit code is the answer ' +
  "(raise the Bash tool's timeout for long plans: `runplan gate claude --install` sets BASH_DEFAULT_TIMEOUT_MS/BASH_MAX_TIMEOUT_MS)";

/** Test-only: `RUNPLAN_GATE_FAILPOINT=throw` makes the gate fail mid-decision (it must deny). */
export const GATE_FAILPOINT = 'RUNPLAN_GATE_FAILPOINT';

// Decides one PreToolUse call: background launches are denied; while a coordinator of the
// repository is live, status/log/report and reads of its state are denied; the rest allowed.
export async function decide(input: HookInput): Promise<Decision> {
  if (process.env[GATE_FAILPOINT] === 'throw') throw new Error(`${GATE_FAILPOINT}=throw`);
  let found: Classified | undefined;
  if (input.command !== undefined) {
    try {
      found = classify(input.command);
    } catch (e) {
      if (!(e instanceof ShellSyntaxError)) throw e;
      // Text the reader cannot take apart is denied only where it could hide a runplan call.
      if (/runplan/.test(input.command))
        return deny('unreadable_command', `cannot read the command (${e.message}) and it names runplan`, 'write it plainly');
      return { kind: 'allow' };
    }
    const background = backgroundOf(found, input);
    if (background !== undefined)
      return deny('background_launch', `${background} would start a runplan coordinator detached from this call`, FOREGROUND_HINT);
  }
  const invocations = found?.invocations ?? [];
  const roots = await stateRoots({
    cwd: input.cwd,
    repos: flagValues(invocations, '--repo'),
    stateDirs: flagValues(invocations, '--state-dir'),
  });
  const live = await liveRuns(roots);
  if (live.length === 0) return { kind: 'allow' };
  const liveRoots = [...new Set(live.map((l) => l.stateRoot))];
  const probe = invocations.find((inv) => inv.sub !== undefined && FORENSIC.has(inv.sub));
  if (probe !== undefined) return denyLive(live, `\`runplan ${probe.sub}\``);
  const words = (found?.others ?? []).flatMap((c) => [
    ...c.words.slice(1),
    ...c.targets,
    ...(c.words[0] !== undefined ? [c.words[0]] : []),
  ]);
  const cwds = directoriesOf(found?.others ?? [], input.cwd);
  const read =
    input.paths.find((path) => touchesRoot(path, cwds, liveRoots, 'glob_tool')) ??
    words.find((word) => touchesRoot(word, cwds, liveRoots, 'bash'));
  if (read !== undefined) return denyLive(live, `reading ${read}`);
  // A walk of a directory tree started above the state root reads it too.
  const walk =
    input.toolName === 'Grep' ? grepToolReaches(input.paths[0], input.cwd, liveRoots) : walkOf(found?.others ?? [], input.cwd, liveRoots);
  if (walk !== undefined) return denyLive(live, `walking ${walk}, which holds the state`);
  return { kind: 'allow' };
}

// The first walk into a live root among the commands, each from the directory it runs in:
// where the script starts, as each `cd`/`pushd` before it left it (a walk of `.` after
// `cd src` is a walk of src, not of the repository).
function walkOf(commands: SimpleCommand[], cwd: string, roots: string[]): string | undefined {
  let here = cwd;
  for (const c of commands) {
    const [program, ...args] = c.words;
    const target = args.find((a) => !a.startsWith('-'));
    if (program === 'cd' || program === 'pushd') {
      if (target !== undefined) here = resolve(here, expandHome(target));
      continue;
    }
    const walk = walksIntoRoot(c, [here], roots);
    if (walk !== undefined) return walk;
  }
  return undefined;
}

// The directories the script's commands may run in: where it starts and every `cd`/`pushd`
// it makes, each from the one before (a subshell's `cd` is counted too: it may only deny more).
function directoriesOf(commands: SimpleCommand[], cwd: string): string[] {
  const dirs = [cwd];
  for (const c of commands) {
    const [program, ...args] = c.words;
    const target = args.find((a) => !a.startsWith('-'));
    if ((program === 'cd' || program === 'pushd') && target !== undefined) dirs.push(resolve(dirs[dirs.length - 1]!, expandHome(target)));
  }
  return dirs;
}

// Why the call would run a coordinator in the background, or undefined.
function backgroundOf(found: Classified, input: HookInput): string | undefined {
  const launch = found.invocations.filter(launches);
  if (found.detacher === 'at' || found.detacher === 'batch') {
    if (launch.length > 0 || /runplan/.test(input.command ?? '')) return `\`${found.detacher}\``;
  }
  if (launch.length === 0) return undefined;
  if (input.runInBackground) return 'run_in_background: true';
  const detached = launch.find((inv) => inv.background !== undefined);
  if (detached !== undefined) return detached.background!.startsWith('`') ? detached.background : `\`${detached.background}\``;
  if (found.detacher === 'disown') return '`disown`';
  return undefined;
}

function deny(reason: GateReason, message: string, hint: string): Decision {
  return { kind: 'deny', reason, message, hint };
}

function denyLive(live: LiveRun[], what: string): Decision {
  const runs = live.map((l) => `${l.slug} (pid ${l.holder.pid}, since ${l.holder.acquiredAt})`).join(', ');
  return deny(
    'coordinator_live',
    `${what} while a coordinator is live: ${runs}`,
    "wait for the blocking `runplan run` command's exit code; its receipt is on that command's stderr " +
      '(`runplan stop SLUG` ends a run; status and the state dir open again once no coordinator is live)',
  );
}
