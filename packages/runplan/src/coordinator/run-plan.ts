import writeFileAtomic from 'write-file-atomic';
import { rm } from 'node:fs/promises';
import { isStopHolder } from '../observe/status.js';
import { acquireLock, openWriter } from '@runplan/journal';
import { checkSharedWorkdir } from '../executor/shared-workdir.js';
import { holdingDirectory } from '@runplan/workdir';
import { runTagPrefix } from '../resume/leftovers.js';
import type { Plan } from '../plan/types.js';
import { planDigest, taskContractDigests } from '../plan/digest.js';
import { planCopyText, secretValues } from '../plan/secrets.js';
import { chooseRun, type Start } from '../resume/choose.js';
import { landPrecheck } from './land-check.js';
import { locate } from './locate.js';
import { identityEnv } from '../host/git.js';
import { ensurePrivateDir, newRunId, slugPaths, START_ORDER_FIELD, stateRootFor, type SlugPaths } from '../host/state.js';
import { describeFault, diskFaultOf, diskReason, type DiskFault } from '../host/disk.js';
import { makeReserve, releaseReserve, reservePath } from '../host/disk-reserve.js';
import { Coordinator } from './coordinator.js';
import { coordinatorIdentity } from './identity.js';
import { isBackgroundJob, ownJobControl } from './foreground.js';
import type { RunEnd, RunRequest } from './types.js';

// `runplan run`: validate, take the slug lock, start one logical run and drive it to its
// one receipt. Everything before `run-started` is a refusal that writes nothing.
export async function runPlan(req: RunRequest): Promise<RunEnd> {
  const background = refuseBackground(req);
  if (background !== undefined) return background;
  const located = await locate(req);
  if ('kind' in located) return located;
  const { plan, repo, common, baseCommit } = located;
  // Whether git has an identity for the commits attempts make: asked now, read at dispatch.
  const identity = identityEnv(repo);
  const slug = slugPaths(stateRootFor(common, req.stateDir), plan.slug);
  try {
    await ensurePrivateDir(slug.dir);
  } catch (e) {
    return stateDirRefusal(e, slug.dir);
  }
  const runId = newRunId();
  const lock = await acquireLock(slug.dir, {
    identityPath: slug.identity,
    breakLock: req.breakLock ?? false,
    details: { runId, planFile: plan.file, repo },
  });
  if (!lock.ok) {
    if (lock.error.reason === 'lock_held') {
      const h = lock.error.holder;
      const who = h !== undefined ? `pid ${h.pid} (start time ${h.startTime}, since ${h.acquiredAt})` : 'another process';
      const doing = isStopHolder(h) ? 'being stopped by `runplan stop`,' : 'being run by';
      return { kind: 'locked', holder: h, slug: plan.slug, message: `slug ${plan.slug} is ${doing} ${who}: ${slug.dir}` };
    }
    const fault = diskFaultOf({ error: lock.error });
    if (fault !== undefined) return refusedForDisk(fault, 'the slug lock was not taken; nothing was started');
    return {
      kind: 'refused',
      reason: lock.error.reason,
      message: lock.error.message,
      ...(lock.error.reason === 'foreign_host' ? { hint: 'pass --break-lock if that host is gone' } : {}),
    };
  }
  try {
    located.savePlan();
    const contracts = taskContractDigests(plan);
    const chosen = await chooseRun({ slug, plan, repo, req, runId, baseCommit, digests: contracts });
    for (const line of chosen.notices) req.onNotice?.(line);
    if (!chosen.ok) return chosen.end;
    // A resume keeps its run's id: the identity names the run this coordinator goes on with,
    // not the id minted before it knew (status and stop read it).
    if (chosen.value.run.runId !== runId) await lock.value.update({ runId: chosen.value.run.runId });
    if (plan.land !== undefined) {
      const start = chosen.value;
      const line = start.mode === 'clean' ? baseCommit : start.recovered.head;
      const checked = await landPrecheck(repo, plan.land, line, plan.file);
      if (checked.refusal !== undefined) return { kind: 'refused', ...checked.refusal };
      if (checked.notice !== undefined) req.onNotice?.(checked.notice);
    }
    const shared = await checkWorkdir(plan, slug, { runId: chosen.value.run.runId, signal: req.signal });
    for (const line of shared.notices) req.onNotice?.(line);
    if (shared.refusal !== undefined) return { kind: 'refused', ...shared.refusal };
    return await startRun({ plan, repo, slug, start: chosen.value, baseCommit, contracts, identity, req });
  } catch (e) {
    // A write refused before the run started (closing earlier runs, the plan copy): nothing ran.
    const fault = diskFaultOf(e);
    if (fault !== undefined) return refusedForDisk(fault, 'nothing was started');
    throw e;
  } finally {
    await lock.value.release();
  }
}

// Whether the Slurm nodes see where the attempts' worktrees will be (the workdir's holding
// directory: the same for every attempt of the run), before anything is submitted.
function checkWorkdir(plan: Plan, slug: SlugPaths, run: { runId: string; signal: AbortSignal }): ReturnType<typeof checkSharedWorkdir> {
  const vars = { 'harness.name': plan.slug, 'plan.slug': plan.slug };
  const held = plan.workdir === undefined ? { ok: true as const, value: slug.work } : holdingDirectory(plan.workdir, vars);
  if (!held.ok) return Promise.resolve({ notices: [] });
  return checkSharedWorkdir(plan, { dir: held.value, tagPrefix: runTagPrefix(run.runId), signal: run.signal });
}

// A coordinator started as a background job (`runplan run … &` at a prompt) would leave
// whoever started it without the exit code: refused before anything is read or locked.
function refuseBackground(req: RunRequest): RunEnd | undefined {
  if (req.allowBackground === true) return undefined;
  const job = ownJobControl();
  if (job === undefined || !isBackgroundJob(job)) return undefined;
  return {
    kind: 'refused',
    reason: 'background_launch',
    message: `runplan run must not be a background job (its process group ${job.pgrp} is not the terminal's foreground group ${job.tpgid}); nothing was started`,
    hint: 'run it in the foreground (no `&`): it blocks until the run ends and its exit code is the answer; --allow-background if you really mean it',
  };
}

// A disk failure before run-started: a refusal (exit 3) that names the errno and the path.
// Why a slug's state dir that cannot be created stops the run: `run` meets the error in its
// mkdir, `run --dry-run` in its probe (host/dir-check.ts), and both say it this way.
export function stateDirRefusal(e: unknown, dir: string): Extract<RunEnd, { kind: 'refused' }> {
  const fault = diskFaultOf(e, dir);
  if (fault !== undefined) return refusedForDisk(fault, 'cannot create the state dir');
  return { kind: 'refused', reason: 'state_unwritable', message: `cannot create ${dir}: ${(e as Error).message}` };
}

function refusedForDisk(fault: DiskFault, what: string): Extract<RunEnd, { kind: 'refused' }> {
  return {
    kind: 'refused',
    reason: diskReason(fault.errno),
    message: `${describeFault(fault)}; ${what}`,
    hint: 'make room on that file system, then run the same command again',
  };
}

/** What startRun needs once the slug lock is held and the run to start is chosen. */
interface StartInputs {
  plan: Plan;
  repo: string;
  slug: SlugPaths;
  start: Start;
  /** The plan's base, resolved before the lock was taken (a resume keeps its run's own). */
  baseCommit: string;
  contracts: Map<string, string>;
  /** git's commit identity fallback, asked early and read at dispatch. */
  identity: Promise<Record<string, string>>;
  req: RunRequest;
}

// Creates the run dir, the plan copy, the disk reserve and the journal, then drives the run.
async function startRun(inputs: StartInputs): Promise<RunEnd> {
  const { plan, repo, slug, start, baseCommit, contracts, identity, req } = inputs;
  const { run } = start;
  const secrets = secretValues(plan);
  const digest = planDigest(plan);
  // The run dir, the plan copy and the disk reserve come before the journal: a disk that
  // refuses them is a refusal (exit 3) naming the errno and the path; nothing started.
  const before: Array<[string, () => Promise<unknown>]> = [
    [run.dir, () => ensurePrivateDir(run.dir)],
    [run.planCopy, () => writeFileAtomic(run.planCopy, planCopyText(plan, process.env, secrets), { mode: 0o600 })],
    [reservePath(run.dir), () => makeReserve(run.dir)],
  ];
  for (const [path, write] of before) {
    try {
      await write();
    } catch (e) {
      const fault = diskFaultOf(e, path);
      if (fault === undefined) throw e;
      await releaseReserve(run.dir);
      // A new run's directory, made just now and holding no journal, goes with it: left, its
      // plan copy took space on the full disk that status and log never show.
      if (start.mode !== 'resume') await rm(run.dir, { recursive: true, force: true }).catch(() => undefined);
      return refusedForDisk(fault, 'nothing was started');
    }
  }
  try {
    const fs = req.journalFs !== undefined ? { fs: req.journalFs } : {};
    // A resume hands the writer the scan that read the journal: it is used only if the file is still exactly those bytes.
    const opened = await openWriter(
      run.journal,
      start.mode === 'resume'
        ? { create: false, digest: true, ...fs, ...(start.scanned ? { scanned: start.scanned } : {}) }
        : { create: true, digest: true, runId: run.runId, headerFields: { [START_ORDER_FIELD]: start.startOrder }, ...fs },
    );
    if (!opened.ok) {
      // A full disk is not a reason to abandon the run: room, then the same command.
      const full = diskFaultOf({ error: opened.error });
      if (start.mode === 'resume' && full !== undefined)
        return refusedForDisk(full, `the run ${run.runId} was not resumed; nothing was started`);
      if (start.mode === 'resume')
        return {
          kind: 'refused',
          reason: opened.error.reason,
          message: `cannot resume ${run.runId}: ${opened.error.message}`,
          hint: `runplan run ${plan.file} --fresh`,
        };
      return { kind: 'journal_failed', message: opened.error.message, journal: run.journal };
    }
    const writer = opened.value;
    const base = start.mode === 'clean' ? baseCommit : start.recovered.started.baseCommit;
    try {
      const coordinator = new Coordinator({ plan, repo, slug, run, baseCommit: base, writer, secrets, planDigest: digest, contracts, req });
      const end = await coordinator.drive(start, identity);
      if (end.kind === 'journal_failed') await coordinator.journal.noteFailure(coordinatorIdentity());
      return end;
    } finally {
      await writer.close().catch(() => undefined);
    }
  } finally {
    await releaseReserve(run.dir);
  }
}
