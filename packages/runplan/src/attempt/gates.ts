import { join } from 'node:path';
import type { Captured } from '@runplan/settle';
import { renderArgv, type TemplateVars } from '@runplan/workdir';
import { maskSecrets } from '../plan/secrets.js';
import { classifyGate } from '../repair/classify.js';
import type { AttemptFailureData, GateResult } from '../events/types.js';
import { textTail, writeEvidence } from '../host/evidence.js';
import { scrubbedGitEnv } from '../host/git.js';
import { executorFor, gatesExecutor } from '../executor/index.js';
import { fail, writing } from './failure.js';
import { jobEvents } from './job-events.js';
import { settleOwnership } from './ownership.js';
import type { Attempt } from './record.js';

// A gate or a loop's verify command: captured, in the worktree, held to gate_deadline,
// owned by this attempt.
export function check(a: Attempt, argv: readonly string[], tree: string): Promise<Captured> {
  return executorFor(gatesExecutor(a.task)).capture(
    {
      argv,
      cwd: tree,
      env: scrubbedGitEnv(a.ctx.gitIdentity),
      input: '',
      deadlineMs: a.task.gateDeadlineMs,
      signal: a.ctx.signal,
      ownerTag: a.ownerTag,
      ...settleOwnership(a.ownership),
      maxBuffer: 4 << 20,
    },
    jobEvents(a, 'gates'),
  );
}

// Runs the gates in order (captured, gate_deadline); the first failure stops them.
export async function runGates(
  a: Attempt,
  at: { vars: TemplateVars; tree: string; phase: 'gates' | 'integrate' },
): Promise<AttemptFailureData | undefined> {
  const { ctx, task } = a;
  const { phase } = at;
  if (task.gates.length === 0) return undefined;
  const results: GateResult[] = [];
  let failure: AttemptFailureData | undefined;
  for (const [i, template] of task.gates.entries()) {
    const argv = renderArgv(template, at.vars, 'pre_run');
    if (!argv.ok) {
      failure = fail('template_refused', phase, argv.error.message);
      break;
    }
    const gate = await check(a, argv.value, at.tree);
    const path = join(a.evidenceDir, `${phase === 'gates' ? 'gate' : 'integrate-gate'}-${i + 1}.log`);
    const output = `$ ${argv.value.join(' ')}\n# ${gate.reason} exit=${gate.exitCode} ${gate.durationMs}ms\n--- stdout\n${gate.stdout.toString('utf8')}\n--- stderr\n${gate.stderr.toString('utf8')}\n`;
    const written = await writing(a, path, () => writeEvidence(path, output, ctx.secrets));
    if (!written.ok) return written.error;
    a.rec.evidence.push(path);
    a.rec.survivors.push(...gate.teardown.survivors);
    results.push({
      argv: argv.value.map((arg) => maskSecrets(arg, ctx.secrets)),
      reason: gate.reason,
      exitCode: gate.exitCode,
      durationMs: gate.durationMs,
      evidence: path,
    });
    const c = classifyGate(gate);
    if (c !== undefined) {
      const how = gate.reason === 'exited' ? `exited ${gate.exitCode}` : gate.reason;
      failure = fail(c.reason, phase, `gate ${i + 1} (${argv.value.join(' ')}) ${how}`, maskSecrets(textTail(output), ctx.secrets));
      break;
    }
  }
  await ctx.emit('gates-done', { taskId: task.id, attempt: a.attempt, phase, passed: failure === undefined, gates: results });
  return failure;
}
