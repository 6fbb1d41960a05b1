import { unreachable } from '@runplan/common';
import { dryRun, type DryStep } from './coordinator/dry-run.js';
import type { SafeOutput } from './observe/progress.js';
import { describeEnd } from './cli-run.js';
import { runOptions } from './cli-support.js';

// `runplan run PLAN --dry-run` at the terminal: one line per step on stdout (JSON Lines with
// --json), the refusal or the lock holder on stderr as `run` says them. Exit 0 when the next
// run would dispatch or is up to date, 2 for an invalid plan, 3 when it would refuse, 4 when
// a coordinator (or a `runplan stop`) holds the slug.
export async function dryRunCommand(planFile: string, o: Record<string, unknown>, stdout: SafeOutput, stderr: SafeOutput): Promise<number> {
  const end = await dryRun({ planFile, ...runOptions(o) });
  const say = (line: string) => stderr.write(line + '\n');
  if (end.kind === 'invalid_plan' || end.kind === 'locked') {
    // A script reading the JSON Lines gets one object for these too (people read stderr).
    if (o.json === true) {
      const { kind, ...fields } = end;
      stdout.write(`${JSON.stringify({ action: kind, ...fields })}\n`);
    }
    for (const line of describeEnd(end)) say(line);
    return end.kind === 'invalid_plan' ? 2 : 4;
  }
  const steps: DryStep[] =
    end.kind === 'refused'
      ? [{ action: 'refuse', reason: end.reason, message: end.message, ...(end.hint !== undefined ? { hint: end.hint } : {}) }]
      : end.steps;
  for (const step of steps) {
    if (o.json === true) stdout.write(JSON.stringify(step) + '\n');
    else if (step.action === 'notice') say(step.line);
    else stdout.write(stepLine(step) + '\n');
    if (step.action === 'dispatch')
      for (const name of step.notFound ?? []) {
        const where = name.includes('/') ? 'is not an executable file' : 'is not on the PATH its attempt gets';
        say(`runplan: command_not_found: task ${step.task}: ${JSON.stringify(name)} ${where}; the attempt would fail (spawn_failed)`);
      }
    if (step.action === 'refuse') {
      say(`runplan: ${step.reason}: ${step.message}`);
      if (step.hint !== undefined) say(`  hint: ${step.hint}`);
    }
  }
  return steps.some((s) => s.action === 'refuse') ? 3 : 0;
}

// One step as a line people read (and scripts split on spaces).
function stepLine(step: DryStep): string {
  switch (step.action) {
    case 'new_run':
      return `new run base ${step.base} ${step.baseCommit}`;
    case 'resume':
      return `resume run ${step.run} base ${step.baseCommit}`;
    case 'continue':
      return `continue run ${step.run} base ${step.baseCommit}`;
    case 'up_to_date':
      return `up to date: run ${step.run}, ${step.resultCommit}`;
    case 'abandon':
      return `abandon run ${step.run}`;
    case 'notice':
      return step.line;
    case 'budget': {
      const tokens = `tokens ${step.tokens}${step.maxTokens !== null ? `/${step.maxTokens}` : ''}`;
      const cost = `cost $${step.costUsd.toFixed(2)}${step.maxCostUsd !== null ? `/$${step.maxCostUsd.toFixed(2)}` : ''}`;
      return `budget ${tokens} ${cost}${step.maxTokens === null && step.maxCostUsd === null ? ' (no [budget])' : ''}`;
    }
    case 'land':
      return `land ${step.branch} pre-check ok`;
    case 'skip':
      return `skip ${step.task} checkpoint ${step.checkpoint} run ${step.run}`;
    case 'adopt':
      return `adopt ${step.task} checkpoint ${step.checkpoint} run ${step.run}`;
    case 'dispatch': {
      const from = step.fromRound !== undefined ? ` from round ${step.fromRound.round} of attempt ${step.fromRound.attempt}` : '';
      return `dispatch ${step.task} attempt ${step.attempt}${from}`;
    }
    case 'refuse':
      return `refuse ${step.reason}`;
    default:
      return unreachable(step);
  }
}
