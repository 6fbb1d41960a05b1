import { resetHasPassed } from '../events/view.js';
import { roomRefusal } from '../host/disk.js';
import { runPaths } from '../host/state.js';
import { PLAN_DEFAULTS } from '../plan/types.js';
import type { PriorRun } from './inspect.js';
import { withContinuedTrees } from './chain-trees.js';
import { owedAdoptions } from './owed-adoptions.js';
import { recoverRun, type RecoveredRun } from './recover.js';
import { budgetSpentRefusal } from './slug-spend.js';
import type { Refusal } from './refusal.js';
import type { Decided, DecideInput } from './start.js';

// A refusal as the end decideRun returns.
function refused(r: Refusal): Decided {
  return { ok: false, end: { kind: 'refused', ...r } };
}

// Continues the slug's last run, `last`, which failed: refused while the disk it ran out of is
// still short, when its journal does not recover, when it would run again a task repair
// stopped on the same inputs, or while the slug's budget is spent.
export async function continuationStart(last: PriorRun, input: DecideInput): Promise<Decided> {
  const { slug, plan, repo, req, runId, startOrder, digests } = input;
  // After disk_full the changed input is the disk itself: no dispatch while it is still short.
  if (last.failedReason === 'disk_full') {
    const detail = last.journal.failedReceipt?.detail;
    const path = typeof detail?.path === 'string' && detail.path !== '' ? detail.path : slug.dir;
    const full = await roomRefusal(
      path,
      plan.minFree ?? PLAN_DEFAULTS.minFree,
      `run ${last.paths.runId} failed for lack of space writing ${path}`,
      plan.file,
    );
    if (full !== undefined) return refused(full);
  }
  const recovered = await recoverRun(last, { plan, repo, mode: 'continue', digests });
  if (!recovered.ok) return refused(recovered.error);
  // A continuation stopped before it had adopted every checkpoint: the rest are adopted too.
  const owed = await owedAdoptions(recovered.value, { plan, repo, digests, prior: input.prior });
  const adopted = owed?.recovered ?? recovered.value;
  // A task repair stopped is not run again on the same inputs: only --retry (the operator
  // says the cause changed) or a contract changed since the stopped attempt (the digest
  // its attempt-started journaled) lets a continuation dispatch it. An attempt that
  // journaled no digest counts as unchanged.
  // A stop for a provider limit that resets too far away is over once the reset has passed:
  // time is the input that changed, and the receipt's own hint is this very command.
  const now = Date.now();
  const stopped = [...adopted.stopped].filter(
    ([task, s]) =>
      !(req.retry ?? []).includes(task) &&
      digests.has(task) &&
      (s.contractDigest === null || s.contractDigest === digests.get(task)) &&
      !resetHasPassed(s, now),
  );
  const waiting = stopped.filter(([, s]) => s.resetAtMs !== null);
  if (waiting.length === stopped.length && waiting.length > 0) {
    const until = Math.max(...waiting.map(([, s]) => s.resetAtMs!));
    const retries = [...new Set([...(req.retry ?? []), ...waiting.map(([task]) => task)])].map((task) => `--retry ${task}`).join(' ');
    return refused({
      reason: 'repair_stopped',
      message: `${waiting.map(([task]) => task).join(', ')} of run ${last.paths.runId} stopped for a provider limit that resets at ${new Date(until).toISOString()}: not before then`,
      hint: `run the same command after ${new Date(until).toISOString()} (or now, if the limit was lifted: runplan run ${plan.file} ${retries})`,
    });
  }
  if (stopped.length > 0) {
    // Every such task at once, and a hint that retries them all with the --retry already
    // given: one refusal per stopped task would take as many tries to get past.
    const why = ([task, s]: (typeof stopped)[number]) => `${task} (class ${s.class}, ${s.reason}: ${s.detail})`;
    const retries = [...new Set([...(req.retry ?? []), ...stopped.map(([task]) => task)])].map((task) => `--retry ${task}`).join(' ');
    const one = stopped.length === 1;
    return refused({
      reason: 'repair_stopped',
      message: one
        ? `task ${stopped[0]![0]} of run ${last.paths.runId} was stopped by repair (class ${stopped[0]![1].class}, ${stopped[0]![1].reason}: ${stopped[0]![1].detail}); running it again on the same inputs would repeat it`
        : `${stopped.length} tasks of run ${last.paths.runId} were stopped by repair: ${stopped.map(why).join('; ')}; running them again on the same inputs would repeat them`,
      hint: `if ${one ? 'its cause' : 'their causes'} changed: runplan run ${plan.file} ${retries}   (or --fresh to start over)`,
    });
  }
  const spent = budgetSpentRefusal(plan, input.carried, 'a continuation');
  if (spent !== undefined) return refused(spent);
  // A continuation proceeds on the base its runs started from; a moved base is said once.
  const old = adopted.started.baseCommit;
  const moved =
    old !== input.baseCommit
      ? [
          `runplan: base_moved: continuing from ${old}; ${input.baseCommit} is the base now — runplan run ${plan.file} --new-run starts from it`,
        ]
      : [];
  return {
    ok: true,
    value: {
      mode: 'continue',
      run: runPaths(slug, runId),
      startOrder,
      origin: last.paths.runId,
      recovered: withContinuedTrees(afterResets(adopted, now), last, input.prior),
      abandoned: [],
    },
    notices: moved,
  };
}

// A task whose provider reset has passed starts its failure history over, as `--retry` would
// make it: the too-far failure counted against the provider cap, and carried, the first
// ordinary 429 of the continuation would stop it at once (cap_exhausted).
function afterResets(recovered: RecoveredRun, now: number): RecoveredRun {
  const passed = [...recovered.stopped].filter(([, s]) => resetHasPassed(s, now)).map(([task]) => task);
  if (passed.length === 0) return recovered;
  return { ...recovered, histories: new Map([...recovered.histories].filter(([task]) => !passed.includes(task))) };
}
