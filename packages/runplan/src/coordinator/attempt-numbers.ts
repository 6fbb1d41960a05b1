import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { render } from '@runplan/workdir';
import { workdirVars } from '../attempt/vars.js';
import { attemptEvidenceDir } from '../host/state.js';
import type { RunParts } from './parts.js';

// The number the next attempt of a task takes: past this run's and the slug history's
// highest, and past any number whose attempt dir, evidence dir or worktree is on disk
// although the journal does not record it (journaled as attempt-renumbered).
export async function nextAttempt(parts: RunParts, taskId: string): Promise<number> {
  const { ledger } = parts;
  let n = Math.max(ledger.attempts.get(taskId) ?? 0, ledger.attemptFloor.get(taskId) ?? 0) + 1;
  const skipped: Array<{ attempt: number; found: string }> = [];
  for (let found = attemptOnDisk(parts, taskId, n); found !== undefined; found = attemptOnDisk(parts, taskId, n)) {
    skipped.push({ attempt: n, found });
    n += 1;
  }
  if (skipped.length > 0) await parts.ctx.emit('attempt-renumbered', { taskId, attempt: n, skipped });
  return n;
}

// What on disk already belongs to attempt `n` of a task (a path), or undefined.
function attemptOnDisk(parts: RunParts, taskId: string, n: number): string | undefined {
  const { ctx } = parts;
  const evidence = attemptEvidenceDir(ctx.run, taskId, n);
  if (existsSync(evidence)) return evidence;
  const dir = render(ctx.workdirTemplate, workdirVars(ctx, { id: taskId }, n), 'workdir');
  if (!dir.ok) return undefined;
  if (existsSync(dir.value)) return dir.value;
  const tree = join(dir.value, 'tree');
  return parts.registeredTrees.has(tree) ? tree : undefined;
}
