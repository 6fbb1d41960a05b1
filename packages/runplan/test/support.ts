// Shared by the runplan bin tests: run the real bin in a fixture repo, read its journals.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  binPath,
  envWithAgents,
  gitRepo,
  killAll,
  readLedger,
  runBin,
  tempDir,
  waitForLine,
  waitUntil,
  withCleanup,
  writePlan,
  type BinResult,
  type GitRepo,
} from '@runplan/test-fixtures';

export { alive, killAll, waitForLine, waitUntil } from '@runplan/test-fixtures';
import { readJournal, type JournalRecord } from '@runplan/journal';
import { teardownTagged } from '@runplan/settle';
import { compareRunStarts, headerStartOrder, RUN_ID_PATTERN, runTagPrefix, type RunStart } from '../src/index.js';

export const RUNPLAN = binPath('runplan');

export interface Fixture {
  repo: GitRepo;
  plan: string;
  ledger: string;
  env: Record<string, string>;
  cleanup(): void;
}

// A fresh repo with a fixture plan (by name or text) and an environment with the mock agents.
export function setup(plan: string, replacements: Record<string, string> = {}, extraEnv: Record<string, string | undefined> = {}): Fixture {
  const repo = gitRepo();
  const scratch = tempDir('runplan-ledger-');
  const ledger = join(scratch.path, 'ledger');
  const planFile = writePlan(repo.path, plan, replacements);
  const env = envWithAgents({ MOCK_LEDGER: ledger, RUNPLAN_FAILPOINT: undefined, ...extraEnv });
  return {
    repo,
    plan: planFile,
    ledger,
    env,
    cleanup: () => {
      repo.cleanup();
      scratch.cleanup();
    },
  };
}

export interface PlanFixtureOptions {
  replacements?: Record<string, string>;
  env?: Record<string, string | undefined>;
  /** The whole test's bound. Default 120 s. */
  timeoutMs?: number;
}

// A test body over a fresh fixture repo and plan (see setup): bounded, and cleaned up after
// whatever happens — every mock agent the ledger names is killed, then whatever the fixture's
// runs still own (processes and the cgroups settle made for them), then the repo removed.
export function withPlan(plan: string, opts: PlanFixtureOptions, body: (f: Fixture) => Promise<void>): () => Promise<void> {
  return withCleanup(
    opts.timeoutMs ?? 120_000,
    () => {
      const f = setup(plan, opts.replacements ?? {}, opts.env ?? {});
      return {
        ...f,
        cleanup: async () => {
          killAll(readLedger(f.ledger).map((e) => e.pid));
          await endRunLeftovers(join(f.repo.path, '.git', 'runplan'));
          f.cleanup();
        },
      };
    },
    body,
  );
}

// What the fixture's runs left that no resume or stop ended, because the test killed the
// coordinator and cleans up without either: a held mock agent and the cgroup settle made for
// it (`settle-r<run id>_…`). Ended as a resume would, so no cgroup outlives the test (a
// cgroup still being emptied when it was only checked stayed behind, one per such test).
// A test whose runs use another --state-dir calls it for that directory before removing it.
export async function endRunLeftovers(state: string): Promise<void> {
  if (!existsSync(state)) return;
  const prefixes = readdirSync(state).flatMap((slug) =>
    existsSync(join(state, slug)) && statSync(join(state, slug)).isDirectory()
      ? readdirSync(join(state, slug))
          .filter((n) => RUN_ID_PATTERN.test(n))
          .map((id) => runTagPrefix(id))
      : [],
  );
  if (prefixes.length > 0) await teardownTagged({ prefixes }, { signal: 'SIGKILL', graceMs: 2000 });
}

export interface MockPlan {
  slug: string;
  /** Top-level keys after `slug` and `base = "main"` (`jobs = 2`, `workdir = …`), one a line. */
  top?: string[];
  /** The `[executor]` table's lines; without them the plan has no such table (local). */
  executor?: string[];
  /** The agent the defaults run with `{{task.id}} {{run.attempt}}`. Default mock-agent. */
  agent?: string;
  /** `[defaults]` lines after command and format. Default: deadline 5m, grace 2s. */
  defaults?: string[];
  /** The rest of the plan: its `[[tasks]]`. */
  tasks: string;
}

// A plan on main whose defaults run a mock agent (claude-stream-json): the header most tests share.
export function mockPlan(p: MockPlan): string {
  return [
    `slug = "${p.slug}"`,
    'base = "main"',
    ...(p.top ?? []),
    ...(p.executor === undefined ? [] : ['[executor]', ...p.executor]),
    '[defaults]',
    `command = ["${p.agent ?? 'mock-agent'}", "{{task.id}}", "{{run.attempt}}"]`,
    'format = "claude-stream-json"',
    ...(p.defaults ?? ['deadline = "5m"', 'grace = "2s"']),
    p.tasks.trimStart(),
  ].join('\n');
}

// One improve-verify loop task (`improve`: a round per line of rounds.txt until it has 3,
// rounds = 3) under `slug`: the plan the loop, crash and ref tests share.
export function loopPlan(slug: string): string {
  return mockPlan({ slug, tasks: loopTask(3) });
}

// The loop task of loopPlan, allowed `rounds` rounds.
export function loopTask(rounds: number): string {
  return `[[tasks]]
id = "improve"
prompt = """
mock: until-file rounds.txt 3
"""
until = ["mock-verify", "rounds.txt", "3"]
rounds = ${rounds}
`;
}

// `runplan ARGS` through the real bin.
export function runplan(args: string[], f: { env: Record<string, string>; repo?: GitRepo }, timeoutMs = 120_000): Promise<BinResult> {
  return runBin(RUNPLAN, args, { env: f.env, ...(f.repo ? { cwd: f.repo.path } : {}), timeoutMs });
}

// `runplan run` through the real bin, killed (kill -9) once the agent's escaped grandchild
// has written its pid to `pids` (MOCK_PIDS): the crash leaves that grandchild running.
export async function crashOnceGrandchildRuns(f: Fixture, pids: string): Promise<void> {
  let pid = 0;
  const running = runBin(RUNPLAN, ['run', f.plan], { env: f.env, timeoutMs: 110_000, onSpawn: (p) => (pid = p) });
  await waitForLine(pids, (l) => /grandchild \d+/.test(l));
  process.kill(pid, 'SIGKILL');
  await running;
}

// The slug's state dir in a fixture repo.
export function slugDir(repo: GitRepo, slug: string): string {
  return join(repo.path, '.git', 'runplan', slug);
}

// Run ids of a slug in start order, oldest first: runplan's own order (compareRunStarts over
// each journal's header), never the names — two runs of one second differ only in salt.
export function runIds(repo: GitRepo, slug: string): string[] {
  const dir = slugDir(repo, slug);
  if (!existsSync(dir)) return [];
  const runs: RunStart[] = [];
  for (const runId of readdirSync(dir).filter((n) => RUN_ID_PATTERN.test(n))) {
    const journal = join(dir, runId, 'journal.jsonl');
    if (!existsSync(journal)) continue;
    runs.push({ runId, ...headerOf(journal) });
  }
  return runs.sort(compareRunStarts).map((r) => r.runId);
}

// The start order and creation time in a journal's header line (nulls when it has none).
function headerOf(journal: string): { startOrder: number | null; createdAt: string | null } {
  const first = readFileSync(journal, 'utf8').split('\n', 1)[0] ?? '';
  try {
    const record = JSON.parse(first.slice(9)) as { ts: string; data: Record<string, unknown> };
    return { startOrder: headerStartOrder(record.data), createdAt: record.ts };
  } catch {
    return { startOrder: null, createdAt: null };
  }
}

// The newest journal of a slug.
export function journalPath(repo: GitRepo, slug: string): string {
  const ids = runIds(repo, slug);
  if (ids.length === 0) throw new Error(`no runs of ${slug}`);
  return join(slugDir(repo, slug), ids[ids.length - 1]!, 'journal.jsonl');
}

export async function records(repo: GitRepo, slug: string): Promise<JournalRecord[]> {
  return (await readJournal(journalPath(repo, slug))).records;
}

// Data of every record of a type.
export function ofType(rs: JournalRecord[], type: string): Array<Record<string, any>> {
  return rs.filter((r) => r.type === type).map((r) => r.data as Record<string, any>);
}

// Waits (bounded) until a journal of the slug exists and holds an event of `type`.
export async function waitForEvent(repo: GitRepo, slug: string, type: string, timeoutMs = 60_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ids = runIds(repo, slug);
    if (ids.length > 0) {
      const path = join(slugDir(repo, slug), ids[ids.length - 1]!, 'journal.jsonl');
      if (existsSync(path) && readFileSync(path, 'utf8').includes(`"type":"${type}"`)) return path;
    }
    await sleep(50);
  }
  throw new Error(`waitForEvent: no ${type} event of ${slug} within ${timeoutMs}ms`);
}

// Waits (bounded) until the newest run's attempt of `task` is holding (MOCK_HOLD): its agent
// printed its first output line and the coordinator saved it to the transcript. Before that
// the agent may still write to the coordinator's pipe, so killing the coordinator earlier
// can make the agent die of SIGPIPE instead of outliving it.
export async function waitForHolding(repo: GitRepo, slug: string, task: string, timeoutMs = 60_000): Promise<string> {
  const journal = await waitForEvent(repo, slug, 'attempt-started', timeoutMs);
  const transcript = await waitUntil(
    `attempt-started of ${task}`,
    async () => {
      const started = ofType((await readJournal(journal)).records, 'attempt-started').find((d) => d.taskId === task);
      return started === undefined ? undefined : join(String(started.evidenceDir), 'transcript.jsonl');
    },
    { timeoutMs },
  );
  await waitUntil(`the first output line of ${task}`, () => existsSync(transcript) && readFileSync(transcript, 'utf8').includes('\n'), {
    timeoutMs,
  });
  return journal;
}

// Every regular file under a directory (recursive).
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = statSync(p, { throwIfNoEntry: false });
      if (s === undefined) continue;
      if (s.isDirectory()) stack.push(p);
      else if (s.isFile()) out.push(p);
    }
  }
  return out;
}
