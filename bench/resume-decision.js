// Resume with 10k checkpoints: how long `runplan run PLAN` takes to decide what to do with
// an incomplete run whose 10 000 tasks are all checkpointed (nothing to dispatch; it only
// has to validate and write its receipt), against one `git cat-file --batch-check` over
// the same 10 001 commits — the least any check that the commits exist can cost.
//
// The state is forged the way the coordinator writes it (packages/runplan/src/events/types.ts):
// a plan of 10 000 `touch` tasks, a journal with run-started (the task count and the
// digest of every task's contract digest), then per task attempt-started → command-settled → gates-done → integrated →
// checkpoint → branch-updated → attempt-closed, and no receipt; the checkpoints name
// 10 000 real commits made with `git fast-import` on runplan/<slug>. Beside it, the fold
// snapshot and the plan cache the coordinator would have left.
//
// When the coordinator cannot resume yet, the parts of the decision are timed on their
// own instead — loading the plan with every contract digest, reading + validating the
// journal with every checkpoint id recomputed and chained, and the cat-file check — and
// the report says so.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { context, git, gitEnv, interleave, makeRepo, now, ratio, root, row, scratch, skipped } from './lib.js';
import { trivialPlan } from './runplan-overhead.js';

export const name = 'resume-decision';
export const title = 'resume decision over 10k checkpoints vs one `git cat-file --batch-check`';

const runplanDist = join(root, 'packages/runplan/dist/src');
const runplanBin = join(root, 'packages/runplan/bin/runplan.js');
const SLUG = 'resume';
const RUN_ID = '20261129T075500Z-0a0b';
const BRANCH = `refs/heads/runplan/${SLUG}`;

// 10 000 commits on BRANCH, each adding tNNNNN.txt on top of the previous; returns their ids in order.
function forgeCommits(repo, tasks) {
  const base = git(repo, ['rev-parse', 'main']);
  const lines = [];
  tasks.forEach((id, i) => {
    const message = `runplan: ${id} (run ${RUN_ID}, attempt 1)\n`;
    lines.push(
      `commit ${BRANCH}`,
      `mark :${i + 1}`,
      `committer runplan <runplan@localhost> ${1795000000 + i} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
      i === 0 ? `from ${base}` : `from :${i}`,
      `M 100644 inline ${id}.txt`,
      'data 0',
      '',
    );
  });
  const marks = join(repo, '.git', 'bench-marks');
  const r = spawnSync('git', ['fast-import', '--quiet', `--export-marks=${marks}`], {
    cwd: repo,
    env: gitEnv(),
    input: lines.join('\n') + '\n',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`git fast-import: ${String(r.stderr).trim()}`);
  const byMark = new Map(
    readFileSync(marks, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );
  return { base, commits: tasks.map((_, i) => byMark.get(`:${i + 1}`).trim()) };
}

// The journal the coordinator would have written for a run that checkpointed every task
// and then died before its receipt.
export async function forgeJournal(path, plan, digests, repo, stateRoot, base, commits) {
  const { encodeRecord, MAX_LINE_BYTES } = await import('@runplan/journal');
  const { checkpointId } = await import('@runplan/runplan');
  const { planDigest, taskListDigest } = await import(join(runplanDist, 'plan/digest.js'));
  const digest = planDigest(plan);
  const out = [];
  let seq = 0;
  let prev = '00000000';
  let clock = Date.UTC(2026, 10, 29, 7, 55);
  const put = (type, data) => {
    const line = encodeRecord({ seq: seq++, prev, ts: new Date((clock += 7)).toISOString(), type, data });
    prev = line.crc;
    out.push(line.bytes);
  };
  put('journal-header', { format: 1, runId: RUN_ID, salt: '5a'.repeat(16) });
  const runStarted = {
    logicalRunId: RUN_ID,
    slug: SLUG,
    planFile: plan.file,
    planCopy: join(stateRoot, SLUG, RUN_ID, 'plan.json'),
    planDigest: digest,
    taskCount: plan.tasks.length,
    tasksDigest: taskListDigest(plan, digests),
    repo,
    stateDir: stateRoot,
    base: 'main',
    baseCommit: base,
    branch: BRANCH,
    jobs: 1,
    land: null,
    workdir: join(stateRoot, SLUG, 'work', '{{run.id}}.{{task.id}}.{{run.attempt}}'),
    coordinator: { pid: 4194000, startTime: 1, bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), host: hostname() },
    abandoned: [],
    continues: null,
    usageCarried: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 },
    costCarried: 0,
  };
  const runStartedBytes = encodeRecord({ seq: 1, prev, ts: new Date(clock).toISOString(), type: 'run-started', data: runStarted }).bytes
    .length;
  if (runStartedBytes > MAX_LINE_BYTES) throw new Error(`run-started is ${runStartedBytes} bytes, over the journal's line limit`);
  put('run-started', runStarted);
  put('branch-updated', { taskId: null, attempt: null, branch: BRANCH, from: null, to: base });
  let head = base;
  const evidence = join(stateRoot, SLUG, RUN_ID, 'evidence');
  plan.tasks.forEach((task, i) => {
    const taskId = task.id;
    const dir = join(stateRoot, SLUG, 'work', `${RUN_ID}.${taskId}.1`);
    const ev = join(evidence, `${taskId}.1`);
    const result = commits[i];
    const contractDigest = digests.get(taskId);
    put('attempt-started', {
      taskId,
      attempt: 1,
      ownerTag: `b${String(i).padStart(19, '0')}`,
      baseCommit: head,
      contractDigest,
      promptDigest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      dir,
      worktree: join(dir, 'tree'),
      evidenceDir: ev,
      dependencyCheckpointIds: [],
    });
    put('command-settled', {
      taskId,
      attempt: 1,
      reason: 'exited',
      exitCode: 0,
      signal: null,
      durationMs: 12,
      teardown: { result: 'none', survivors: [], heldPipe: false },
      error: null,
      sessionId: null,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 },
      costUsd: null,
      isError: false,
      providerLimited: false,
      blocked: null,
      finalMessage: null,
      warnings: [],
      transcript: join(ev, 'transcript.txt'),
      stderr: join(ev, 'stderr.log'),
    });
    put('gates-done', { taskId, attempt: 1, phase: 'gates', passed: true, gates: [] });
    put('integrated', { taskId, attempt: 1, mode: 'fast_forward', attemptBase: head, onto: head, resultCommit: result });
    const key = {
      logicalRunId: RUN_ID,
      planDigest: digest,
      taskId,
      taskContractDigest: contractDigest,
      dependencyCheckpointIds: [],
      baseCommit: head,
      resultCommit: result,
    };
    const id = checkpointId(key);
    put('checkpoint', { id, ...key, attempt: 1 });
    put('branch-updated', { taskId, attempt: 1, branch: BRANCH, from: head, to: result });
    put('attempt-closed', {
      taskId,
      attempt: 1,
      outcome: 'success',
      reason: 'ok',
      class: null,
      phase: null,
      failure: null,
      checkpointId: id,
      evidence: [join(ev, 'transcript.txt'), join(ev, 'stderr.log')],
      survivors: [],
      durationMs: 230,
    });
    head = result;
  });
  mkdirSync(join(stateRoot, SLUG, RUN_ID), { recursive: true, mode: 0o700 });
  const bytes = Buffer.concat(out);
  writeFileSync(path, bytes, { mode: 0o600 });
  const snapshot = await forgeSnapshot(path, out);
  return { records: seq, digest, runStartedBytes, snapshot };
}

// The fold snapshot the coordinator would have left: its last one, at the size its policy
// (snapshotSizes) reached last, made of the fold of exactly the records before it.
async function forgeSnapshot(path, lines) {
  const { readRun, snapshotSizes, writeFoldSnapshot } = await import('@runplan/runplan');
  let end = 0;
  const last = snapshotSizes(lines.map((l) => (end += l.length))).at(-1);
  if (last === undefined) return undefined;
  const prefix = Buffer.concat(lines.slice(0, last.index + 1));
  const temp = `${path}.prefix`;
  writeFileSync(temp, prefix, { mode: 0o600 });
  const { view, status } = await readRun(temp);
  rmSync(temp);
  if (status.kind !== 'clean') throw new Error(`forged prefix: ${status.kind}`);
  const at = { lastSeq: last.index, size: last.size, sha256: createHash('sha256').update(prefix).digest('hex') };
  if (!writeFoldSnapshot(path, view, at)) throw new Error('forged fold snapshot: not written');
  return at;
}

// Baseline: one cat-file --batch-check over the commits; every one must exist.
function catFileBatchCheck(repo, shas) {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch-check'], { cwd: repo, env: gitEnv(), stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = out.trimEnd().split('\n');
      if (code !== 0 || lines.length !== shas.length || lines.some((l) => l.endsWith(' missing')))
        reject(new Error(`cat-file --batch-check: exit ${code}, ${lines.length} lines`));
      else resolve();
    });
    child.stdin.end(shas.join('\n') + '\n');
  });
}

// The decision's own parts, in-process: (1) load the plan and digest every contract, the
// way run.ts does it (`taskContractDigests(plan)`, once per run).
export async function loadWithDigests(planFile) {
  const { loadPlan } = await import(join(runplanDist, 'plan/load.js'));
  const { planDigest, taskContractDigests } = await import(join(runplanDist, 'plan/digest.js'));
  const loaded = await loadPlan(planFile);
  if (!loaded.ok) throw new Error(`loadPlan: ${loaded.error.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  const plan = loaded.value;
  const digests = taskContractDigests(plan);
  return { plan, digests, digest: planDigest(plan) };
}

// (2) read + validate the journal; recompute every checkpoint id and check the chain and digests.
async function checkJournal(path, digests, planDigest, base) {
  const { readJournal } = await import('@runplan/journal');
  const { checkpointId } = await import('@runplan/runplan');
  const { records, status } = await readJournal(path);
  if (status.kind === 'corrupt') throw new Error(`journal corrupt: ${JSON.stringify(status)}`);
  let head = base;
  const done = new Map();
  for (const r of records) {
    if (r.type !== 'checkpoint') continue;
    const c = r.data;
    if (c.planDigest !== planDigest || digests.get(c.taskId) !== c.taskContractDigest)
      throw new Error(`checkpoint ${c.taskId}: digest changed`);
    if (c.baseCommit !== head) throw new Error(`checkpoint ${c.taskId}: not on the previous result`);
    if (checkpointId(c) !== c.id) throw new Error(`checkpoint ${c.taskId}: id does not match its key`);
    done.set(c.taskId, c.id);
    head = c.resultCommit;
  }
  if (done.size !== digests.size) throw new Error(`${done.size} checkpoints, ${digests.size} tasks`);
  return [...done.keys()];
}

/** Forges, under `dir`, a repo + plan + state whose one incomplete run checkpointed all `n` tasks. */
export async function forgeState(dir, n) {
  const repo = makeRepo(join(dir, 'repo'));
  const stateRoot = join(dir, 'state');
  writeFileSync(join(dir, 'plan.toml'), trivialPlan(SLUG, n));
  const loaded = await loadWithDigests(join(dir, 'plan.toml'));
  const tasks = loaded.plan.tasks.map((t) => t.id);
  const { base, commits } = forgeCommits(repo, tasks);
  const journal = join(stateRoot, SLUG, RUN_ID, 'journal.jsonl');
  const forged = await forgeJournal(journal, loaded.plan, loaded.digests, repo, stateRoot, base, commits);
  const pristine = join(dir, 'pristine');
  cpSync(join(stateRoot, SLUG), pristine, { recursive: true });
  // The plan cache the crashed coordinator left: `run` writes it at the start, once it holds
  // the slug lock (it is outside the slug's dir, so every round finds it as it was).
  const { loadPlanCached } = await import('@runplan/runplan');
  const cached = await loadPlanCached(join(dir, 'plan.toml'), Promise.resolve(stateRoot));
  if (!cached.loaded.ok) throw new Error('the forged plan does not load');
  cached.save();
  return { repo, stateRoot, journal, pristine, shas: [base, ...commits], loaded, forged, base };
}

// Runs the real coordinator on a fresh copy of the forged state, killed after `limitMs`;
// returns ms and how it ended, and `decidedMs`: when its summary (`runplan: complete: …`,
// printed once the receipt is durable and before the report is written) reached stderr.
function coordinatorRound(dir, repo, stateRoot, pristine, limitMs) {
  rmSync(join(stateRoot, SLUG), { recursive: true, force: true });
  cpSync(pristine, join(stateRoot, SLUG), { recursive: true });
  // The copy written back before the clock starts: a crashed coordinator's state has long
  // been on disk, and the resume's fsyncs must not be the ones that write back the copy's
  // ~50 MB (on the bench file system alternated pairs showed no difference; a slower disk may).
  spawnSync('sync');
  return new Promise((done) => {
    const start = now();
    const child = spawn(process.execPath, [runplanBin, 'run', join(dir, 'plan.toml'), '--repo', repo, '--state-dir', stateRoot], {
      cwd: repo,
      env: gitEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let decidedMs;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
      if (decidedMs === undefined && /^runplan: (complete|failed):/m.test(stderr)) decidedMs = now() - start;
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      done({ ms: now() - start, decidedMs, status, timedOut, stderr });
    });
  });
}

const lastLines = (text) =>
  text
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .slice(-2)
    .join(' | ');

export async function measure({ quick, log }) {
  const { existsSync } = await import('node:fs');
  if (!existsSync(join(runplanDist, 'cli.js')))
    return skipped(name, title, 'not available yet: packages/runplan is not built (npm run build)');
  const n = quick ? 500 : 10000;
  const limitMs = quick ? 8_000 : 30_000;
  const rounds = quick ? 1 : 3;
  const dir = scratch('resume');
  try {
    log?.(`resume-decision: forging ${n} commits, the plan and the journal`);
    const { repo, stateRoot, journal, pristine, shas, loaded, forged, base } = await forgeState(dir.path, n);
    const rows = [];
    const ratios = [];
    const notes = [
      `${n} checkpoints${quick ? ' (--quick; the target is for 10 000)' : ''}; journal ${(readFileSync(journal).length / 2 ** 20).toFixed(1)} MiB, ${forged.records} records; commits made with git fast-import`,
    ];
    notes.push('plan cache as the coordinator leaves it (written at its start): the plan is not parsed, validated or digested again');
    notes.push(`run-started is ${forged.runStartedBytes} bytes for ${n} tasks (task count + task list digest)`);
    notes.push(
      forged.snapshot !== undefined
        ? `fold snapshot as the coordinator leaves it: the fold of the first ${(forged.snapshot.size / 2 ** 20).toFixed(1)} MiB (seq ${forged.snapshot.lastSeq}); the records after it are parsed and folded, every line is checked`
        : 'no fold snapshot (the journal is under the size of the first one): the whole journal is parsed and folded',
    );

    // The coordinator, first: can it resume at all, and within the time this bench allows?
    log?.(`resume-decision: runplan run over ${n} checkpoints (stopped after ${limitMs / 1000} s)`);
    const first = await coordinatorRound(dir.path, repo, stateRoot, pristine, limitMs);
    const coordinator = first.status === 0 ? [first.ms] : [];
    const decided = first.status === 0 && first.decidedMs !== undefined ? [first.decidedMs] : [];
    if (first.status === 0) {
      for (let r = 1; r < rounds; r++) {
        const next = await coordinatorRound(dir.path, repo, stateRoot, pristine, limitMs);
        coordinator.push(next.ms);
        if (next.decidedMs !== undefined) decided.push(next.decidedMs);
      }
      rows.push(row(`runplan run: resume ${n} checkpoints → nothing to do → receipt`, 'ms', coordinator));
      ratios.push(
        ratio('runplan resume decision, total', rows[0].median, {
          limit: 2000,
          better: 'lower',
          unit: 'ms',
          meaning: `wall time of \`runplan run\` from start to exit when all ${n} tasks are checkpointed`,
        }),
      );
    } else if (first.timedOut) {
      // Too slow to wait for: time a small state and scale it, and report the bound we saw.
      const smallN = quick ? 25 : 100;
      const small = scratch('resume-small');
      try {
        const s = await forgeState(small.path, smallN);
        const r = await coordinatorRound(small.path, s.repo, s.stateRoot, s.pristine, 4 * limitMs);
        if (r.status !== 0)
          throw new Error(
            `runplan run over ${smallN} checkpoints ${r.timedOut ? `was stopped after ${(4 * limitMs) / 1000} s` : `exited ${r.status}`}: ${lastLines(r.stderr)}`,
          );
        rows.push(row(`runplan run: resume ${smallN} checkpoints → receipt`, 'ms', [r.ms]));
        notes.push(
          `runplan run over ${n} checkpoints was stopped after ${limitMs / 1000} s; over ${smallN} it took ${(r.ms / 1000).toFixed(1)} s, ≈ ${(r.ms / smallN).toFixed(0)} ms per checkpoint counting start-up, so roughly ${(((r.ms / smallN) * n) / 1000).toFixed(0)} s for ${n} if it grows linearly`,
        );
      } finally {
        small.cleanup();
      }
      ratios.push(
        ratio('runplan resume decision, total', limitMs, {
          limit: 2000,
          better: 'lower',
          unit: 'ms',
          meaning: `a lower bound: \`runplan run\` had not finished deciding over ${n} checkpoints when stopped`,
        }),
      );
    } else {
      notes.push(
        `coordinator resume not available (runplan run exited ${first.status}: ${lastLines(first.stderr)}); only the decision's parts are timed`,
      );
    }

    // The decision's parts in-process, and the baseline, interleaved.
    const v = await interleave(
      [
        {
          key: 'catfile',
          run: async () => {
            const s = now();
            await catFileBatchCheck(repo, shas);
            return now() - s;
          },
        },
        {
          key: 'plan',
          run: async () => {
            const s = now();
            await loadWithDigests(join(dir.path, 'plan.toml'));
            return now() - s;
          },
        },
        {
          key: 'cached',
          run: async () => {
            const { loadPlanCached } = await import('@runplan/runplan');
            const s = now();
            const cached = await loadPlanCached(join(dir.path, 'plan.toml'), Promise.resolve(stateRoot));
            const ms = now() - s;
            if (!cached.fromCache) throw new Error('the plan cache the coordinator left was not taken');
            return ms;
          },
        },
        {
          key: 'journal',
          run: async () => {
            const s = now();
            await checkJournal(journal, loaded.digests, loaded.digest, base);
            return now() - s;
          },
        },
      ],
      { rounds, warmup: 0 },
    );
    const cat = row(`baseline: git cat-file --batch-check, ${shas.length} commits`, 'ms', v.catfile);
    const plan = row(`part: load plan + ${n} contract digests, no plan cache`, 'ms', v.plan);
    const cachedPlan = row('part: the same from the plan cache (as run takes it)', 'ms', v.cached);
    const read = row(`part: read journal (${forged.records} records) + check ${n} checkpoints`, 'ms', v.journal);
    rows.unshift(cat);
    rows.push(plan, cachedPlan, read);
    const parts = cat.median + cachedPlan.median + read.median;
    if (coordinator.length > 0) {
      if (decided.length > 0) {
        const until = row('runplan run: start → its summary printed (the report not yet written)', 'ms', decided);
        rows.push(until);
        ratios.push(
          context(
            'until the summary / cat-file',
            until.median / cat.median,
            'the decision and its receipt alone, without the report written after them',
          ),
        );
      }
      ratios.push(
        ratio('runplan / cat-file', rows[1].median / cat.median, {
          limit: 15,
          better: 'lower',
          meaning:
            'the whole `runplan run` (start-up to exit, the report at the receipt included) relative to the cheapest existence check',
        }),
      );
    } else if (!first.timedOut)
      ratios.push(
        ratio('parts of the decision, summed', parts, {
          limit: 2000,
          better: 'lower',
          unit: 'ms',
          meaning: 'plan + digests, journal read + checkpoint checks, cat-file: a lower bound for the real decision',
        }),
      );
    ratios.push(
      context('parts summed', parts, 'the plan from its cache, journal read + checks, cat-file (a lower bound for any decision)', 'ms'),
    );
    ratios.push(
      context('journal part / cat-file', read.median / cat.median, 'reading and checking the journal relative to the git existence check'),
    );
    return { name, title, rows, ratios, notes };
  } finally {
    dir.cleanup();
  }
}
