import { err } from '@runplan/common';
import type { CheckpointData } from '../events/types.js';
import { runCommand } from './command.js';
import { commitResult } from './commit.js';
import type { StepResult } from './failure.js';
import { runGates } from './gates.js';
import { postRun, preRun } from './hooks.js';
import { integrate } from './integrate.js';
import { runLoop } from './loop.js';
import type { Attempt } from './record.js';
import { setUpWorkspace } from './workspace.js';

/** What the pipeline starts from: the workdir variables, the integration head, the prompt. */
export interface PipelineInput {
  baseVars: Record<string, string | number>;
  baseCommit: string;
  prompt: string;
}

// The steps of one attempt in order (DESIGN "One attempt"). Each step returns its failure;
// the first one ends the attempt, except that post_run runs after a failed command or gate.
export async function pipeline(a: Attempt, input: PipelineInput): Promise<StepResult<CheckpointData>> {
  const { rec, task, ctx } = a;
  const { baseCommit, prompt } = input;

  // setup: evidence dir, attempt dir, `git worktree add --detach`, datadir
  const workspace = await setUpWorkspace(a, input.baseVars, baseCommit);
  if (!workspace.ok) return workspace;
  const { tree, vars } = workspace.value;

  rec.phase = 'pre_run';
  const preRunFailure = await preRun(a, vars, tree);
  if (preRunFailure !== undefined) return err(preRunFailure);

  rec.phase = 'command';
  const command =
    task.until !== undefined ? await runLoop(a, { vars, tree, prompt, baseCommit }) : await runCommand(a, { vars, tree, prompt });
  let primary = command.failure;
  if (primary === undefined) {
    rec.phase = 'gates';
    primary = await runGates(a, { vars, tree, phase: 'gates' });
  }

  rec.phase = 'post_run';
  primary = await postRun(a, { vars, tree }, command.execution, primary);
  if (primary !== undefined) return err(primary);

  rec.phase = 'commit';
  const own = await commitResult(a, tree, baseCommit);
  if (!own.ok) return own;

  rec.phase = 'integrate';
  return ctx.integration.exclusive(() => integrate(a, { vars, tree, attemptBase: baseCommit, own: own.value }));
}
